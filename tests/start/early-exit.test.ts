// A service started by run() that ends is reported with how it ended and its last lines.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { describeExit, firstExit, firstWatchFailure } from "../../scripts/lib/early-exit.mjs";
// @ts-expect-error plain .mjs helper without types
import { run, stopAll } from "../../scripts/lib/procs.mjs";

afterAll(() => stopAll(1_000));

it("resolves with the first child to end, its code and its last lines, the unterminated one included", async () => {
  const stay = run("stays", process.execPath, ["-e", "setTimeout(() => {}, 60_000)"]);
  const dies = run("dies", process.execPath, [
    "-e",
    "for (let i = 1; i <= 20; i++) console.log('line ' + i); process.stderr.write('last words'); process.exit(3)",
  ]);
  const ended = await firstExit([stay, dies]);
  expect(ended).toMatchObject({ name: "dies", code: 3, signal: null });
  expect(ended.lines.at(-1)).toBe("last words");
  expect(ended.lines).toContain("line 20");
  expect(ended.lines).not.toContain("line 1");
  const text = describeExit(ended, "while starting");
  expect(text).toMatch(/^dies exited with code 3 while starting; its last lines:\n {4}line \d+/);
  expect(text).toMatch(/ {4}last words$/);
});

it("under node --watch, a program that fails is reported though its watcher keeps running (npm run dev)", async () => {
  const stay = run("stays", process.execPath, ["-e", "setTimeout(() => {}, 60_000)"]);
  const dir = mkdtempSync(path.join(tmpdir(), "watch-fail-"));
  writeFileSync(path.join(dir, "server.js"), "console.log('cannot start: port in use'); process.exit(1);");
  const watched = run("api-1", process.execPath, ["--watch", "--watch-preserve-output", "server.js"], {
    cwd: dir,
  });
  const failed = await firstWatchFailure([stay, watched]);
  expect(failed).toMatchObject({ name: "api-1", watching: true });
  expect(watched.exitCode).toBeNull();
  const text = describeExit(failed, "while starting");
  expect(text).toMatch(
    /^api-1 failed \(node --watch waits for an edit to run it again\) while starting; its last lines:/,
  );
  expect(text).toContain("cannot start: port in use");
  rmSync(dir, { recursive: true, force: true });
});
