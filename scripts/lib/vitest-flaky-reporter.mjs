// A vitest reporter beside the default one: names every test that failed and then passed on its retry, in a
// line scripts/test.mjs collects into its summary. The suites that lean on real time (leases of a few hundred
// ms on real Redis and PostgreSQL, on a shared 2-core machine) retry a failed test once; a broken feature
// fails both runs, and a test that needed its retry is listed, never hidden.
import path from "node:path";

export default class FlakyReporter {
  onInit(vitest) {
    this.root = vitest.config.root;
  }

  onTestCaseResult(testCase) {
    const d = testCase.diagnostic();
    if (!d?.flaky) return;
    const file = path.relative(this.root ?? process.cwd(), testCase.module.moduleId);
    const why = firstFailure(testCase, file);
    console.log(`[flaky] ${file} > ${testCase.fullName} (passed on retry ${d.retryCount}${why})`);
  }
}

/** "; first run: <message> at <file:line>": why the first run failed, on the same line, so the summary keeps it. */
function firstFailure(testCase, file) {
  const error = testCase.result()?.errors?.[0];
  if (!error) return "";
  const message = String(error.message ?? error)
    .replace(/\s+/g, " ")
    .slice(0, 200);
  const frame = String(error.stack ?? "")
    .split("\n")
    .find((l) => l.includes(file));
  const at = frame?.match(/([^/\s(]+\.test\.\w+:\d+)/)?.[1];
  return `; first run: ${message}${at ? ` at ${at}` : ""}`;
}
