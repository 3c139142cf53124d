// A service started by run() that ends is reported with how it ended and its last lines.
import { afterAll, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { describeExit, firstExit } from "../../scripts/lib/early-exit.mjs";
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
