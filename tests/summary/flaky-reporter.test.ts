// The vitest reporter behind `npm test`'s "passed only on their retry" list: a test that needed its retry is
// named with why its first run failed (message and line), so a flake in CI can be looked into afterwards.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const reporter = path.join(repo, "scripts/lib/vitest-flaky-reporter.mjs");
const vitest = path.join(repo, "node_modules/.bin/vitest");
let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("names a test that passed on its retry, with its first run's error and line", async () => {
  dir = await mkdtemp(path.join(tmpdir(), "flaky-reporter-"));
  // Globals, so the fixture needs no import that would have to resolve from the temporary directory.
  await writeFile(
    path.join(dir, "twice.test.mjs"),
    'let runs = 0;\nit("fails once", () => {\n  runs++;\n  expect(runs).toBe(2);\n});\nit("steady", () => {});\n',
  );
  const { stdout } = await promisify(execFile)(
    vitest,
    ["run", "--root", dir, "--globals", "--retry=1", `--reporter=${reporter}`],
    { cwd: dir, env: { ...process.env, NO_COLOR: "1" } },
  );
  const lines = stdout.split("\n").filter((l) => l.startsWith("[flaky]"));
  expect(lines).toEqual([
    "[flaky] twice.test.mjs > fails once (passed on retry 1; first run: expected 1 to be 2 // Object.is equality at twice.test.mjs:4)",
  ]);
});
