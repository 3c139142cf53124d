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
    console.log(`[flaky] ${file} > ${testCase.fullName} (passed on retry ${d.retryCount})`);
  }
}
