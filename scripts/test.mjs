#!/usr/bin/env node
// `npm test`: everything, on a fresh clone. Installs what it needs, then lint → build → typecheck →
// unit/integration tests on real redis-server processes → Playwright in Debian Chromium.
// Plain Node with no dependencies: it runs before `npm ci`.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pgBinDir } from "./lib/postgres.mjs";
import { exec, stopAll } from "./lib/procs.mjs";
import { checkNode, ensureDependencies, ensureSystemPackages } from "./lib/system.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const env = { NEXT_TELEMETRY_DISABLED: "1", TURBO_TELEMETRY_DISABLED: "1", FORCE_COLOR: "0" };
const turbo = (...args) => ["npx", ["turbo", "run", ...args, "--output-logs=full", "--log-order=grouped"]];

checkNode();
ensureDependencies(root);
ensureSystemPackages(
  [
    { bin: "redis-server", pkg: "redis-server" },
    { bin: "redis-cli", pkg: "redis-tools" },
    { bin: "chromium", pkg: "chromium" },
    // Debian keeps initdb/postgres off PATH, under /usr/lib/postgresql/<version>/bin.
    { bin: "initdb", pkg: "postgresql", found: pgBinDir },
    // The seed's own scripts (examples/seed) are run as written: bash loops of curl.
    { bin: "curl", pkg: "curl" },
  ],
  { why: "tests run on real Redis and PostgreSQL, in Debian Chromium, and with the seed's curl scripts" },
);

process.on("SIGINT", async () => {
  await stopAll();
  process.exit(130);
});

const steps = [
  // biome, the Docker lint (tests/docker/lint.mjs) and each workspace's lint (publint + attw on the lock tarball).
  ["lint", ["npm", ["run", "lint"]]],
  ["build", turbo("build")],
  ["typecheck", turbo("typecheck")],
  // Two workspaces' suites at a time: each runs its files one after another on its own redis-server, and two
  // of them together keep about one of this machine's two cores busy (measured: 445 CPU-s in 425 s), so their
  // lease timings of a few hundred ms hold. The lock's suite against ioredis 5 is a task of its own, so that it
  // runs beside the lock's main suite instead of after it (one lane was 581 s, the other 416 s). `--continue`:
  // one red suite does not hide the others' results.
  ["unit + integration", turbo("test", "test:ioredis5", "--concurrency=2", "--continue")],
  // tests/: `npm start` in a fresh clone and with a local Sentinel group, and the Docker images assembled from
  // the Dockerfile's own lines (the build above fills the turbo cache they reuse).
  [
    "repository (npm start, Docker images, the summary)",
    ["npx", ["vitest", "run", "--config", "tests/vitest.config.ts"]],
  ],
  ["end-to-end (Playwright, Chromium)", turbo("e2e", "--concurrency=1")],
];

const totals = { passed: 0, failed: 0, skipped: 0, flaky: 0 };
const flakySpecs = [];
/** Failed tests by name, each with the first line of its error: the summary repeats them, since a CI log is
 * often read from its tail only. */
const failedTests = [];
const results = [];
const t0 = performance.now();
for (const [name, [cmd, args]] of steps) {
  console.log(`\n\x1b[1m▶ ${name}\x1b[0m`);
  const started = performance.now();
  const { code, output } = await exec(cmd, args, { cwd: root, env, capture: true });
  countTests(output);
  const ok = code === 0 && allTasksRan(output);
  results.push({ name, ok, s: (performance.now() - started) / 1000 });
  if (code === 0 && !ok) console.log(`\n${name}: turbo exited 0 but not every task succeeded (interrupted?)`);
  if (!ok) break;
}

console.log("\n\x1b[1mSummary\x1b[0m");
for (const r of results) console.log(`  ${r.ok ? "✓" : "✗"} ${r.name} (${r.s.toFixed(1)} s)`);
for (const [name] of steps.slice(results.length))
  console.log(`  – ${name} (not run: an earlier step failed)`);
console.log(`  total ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const allOk = results.length === steps.length && results.every((r) => r.ok);
if (!allOk && totals.failed === 0) totals.failed = 1;
if (failedTests.length > 0) {
  console.log("\nFailed:");
  for (const f of failedTests.slice(0, 20)) console.log(`  ${f}`);
  if (failedTests.length > 20) console.log(`  … and ${failedTests.length - 20} more above`);
}
if (flakySpecs.length > 0) {
  console.log("\nPassed only on their retry (flaky, worth a look):");
  for (const spec of flakySpecs) console.log(`  ${spec}`);
}
console.log(
  `\ntests: ${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ""}${totals.flaky ? ` (${totals.flaky} of the passed needed a retry)` : ""}`,
);
process.exit(allOk ? 0 : 1);

// turbo prints "Tasks:    4 successful, 6 total"; interrupted by a signal it can still exit 0 with tasks unrun.
function allTasksRan(output) {
  const clean = output.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "");
  return [...clean.matchAll(/Tasks:\s+(\d+) successful, (\d+) total/g)].every(
    ([, ok, total]) => ok === total,
  );
}

// Sums vitest ("Tests  3 failed | 40 passed (43)") and Playwright ("  12 passed (40.1s)", "  1 flaky")
// summary lines; the specs listed under Playwright's "flaky" line, and vitest's "[flaky]" lines, are
// remembered by name, and so are failed vitest tests with their error's first line.
function countTests(output) {
  const clean = output.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "");
  let inFlakyList = false;
  let failing;
  for (const line of clean.split("\n")) {
    const spec = line.replace(/^.*?:\s(?=\s)/, "");
    // vitest: " FAIL  test/a.test.ts > suite > name", then (after blank lines) the error's first line.
    const task = line.match(/^(\S+?):test:/)?.[1];
    const body0 = line.replace(/^\S+?:\S+?:\s?/, "");
    const fail = body0.match(/^\s*FAIL\s+(\S+\.test\.\w+ > .*)$/);
    if (fail) {
      failing = `${task ? `${task}: ` : ""}${fail[1].trim()}`;
      continue;
    }
    // vitest, scripts/lib/vitest-flaky-reporter.mjs: a test that passed only on its retry (already counted).
    const retried = body0.match(/^\[flaky\] (.*)$/);
    if (retried) {
      flakySpecs.push(`${task ? `${task}: ` : ""}${retried[1]}`);
      totals.flaky++;
      continue;
    }
    if (failing && body0.trim() !== "" && !/^[⎯-]+/.test(body0.trim())) {
      failedTests.push(`${failing}\n      ${body0.trim().slice(0, 300)}`);
      failing = undefined;
    }
    if (inFlakyList && /^\s{4,}\S.*›/.test(spec)) {
      flakySpecs.push(spec.trim());
      continue;
    }
    inFlakyList = false;
    const body = line.replace(/^.*?:\s(?=\s*Tests\s)/, "");
    const vitest = body.match(/^\s*Tests\s+(.*)\(\d+\)\s*$/);
    if (vitest) {
      for (const [, n, kind] of vitest[1].matchAll(/(\d+)\s+(passed|failed|skipped|todo)/g))
        add(kind, Number(n));
      continue;
    }
    const pw = line.match(/^(?:.*?:\s)?\s+(\d+)\s+(passed|failed|flaky|skipped)(?:\s+\(\d.*\))?\s*$/);
    if (pw) {
      add(pw[2], Number(pw[1]));
      inFlakyList = pw[2] === "flaky";
    }
  }
}
function add(kind, n) {
  if (kind === "passed") totals.passed += n;
  else if (kind === "failed") totals.failed += n;
  else if (kind === "flaky") {
    totals.passed += n;
    totals.flaky += n;
  } else totals.skipped += n;
}
