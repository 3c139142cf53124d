// `npm run bench`'s arguments, without running the bench (minutes of full CPU).
import { execFileSync, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { parseBenchArgs, SCENARIO_HELP, usage } from "../../bench/src/cli-args.js";

describe("npm run bench's arguments", () => {
  it("--help lists every option and scenario", () => {
    expect(parseBenchArgs(["--help"])).toEqual({ kind: "help" });
    expect(parseBenchArgs(["-h"])).toEqual({ kind: "help" });
    for (const flag of ["--only", "--rounds", "--throughput-rounds", "--quick", "--merge", "--api-server"])
      expect(usage).toContain(flag);
    for (const id of Object.keys(SCENARIO_HELP)) expect(usage).toMatch(new RegExp(`\\n  ${id}  \\S`));
  });

  it("refuses unknown options, positionals, values it cannot use and unknown scenarios", () => {
    expect(parseBenchArgs(["--bogus"])).toEqual({ kind: "error", message: expect.stringMatching(/--bogus/) });
    expect(parseBenchArgs(["stray"])).toEqual({ kind: "error", message: expect.stringMatching(/stray/) });
    expect(parseBenchArgs(["--rounds"])).toMatchObject({ kind: "error" });
    for (const bad of ["0", "0x3", "1e1", "abc"])
      expect(parseBenchArgs([`--rounds=${bad}`]), bad).toEqual({
        kind: "error",
        message: `--rounds must be a positive whole number, got "${bad}"`,
      });
    expect(parseBenchArgs(["--only", "c,x"])).toEqual({
      kind: "error",
      message: expect.stringMatching(/^unknown scenario\(s\) x; choose from a,b,/),
    });
  });

  it("the defaults, and a run of chosen scenarios", () => {
    expect(parseBenchArgs([])).toMatchObject({
      kind: "run",
      rounds: 3,
      throughputRounds: 5,
      only: Object.keys(SCENARIO_HELP),
      quick: false,
      merge: false,
    });
    expect(parseBenchArgs(["--only=c, f", "--rounds", "5", "--quick"])).toMatchObject({
      only: ["c", "f"],
      rounds: 5,
      quick: true,
    });
  });
});

describe("bench/dist/main.js", () => {
  const bench = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bench");
  const main = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(bench, "dist/main.js"), ...args], {
      encoding: "utf8",
      timeout: 20_000,
    });
  beforeAll(() => {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    execFileSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: bench, stdio: "inherit" });
  }, 120_000);

  it("--help prints the usage and exits 0 without starting anything", () => {
    const r = main("--help");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: npm run bench/);
    expect(r.stdout).not.toMatch(/redis-server/);
  });

  it("an unknown option is one message and exit 2, not a stack trace", () => {
    const r = main("--bogus");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^Unknown option '--bogus'\n.*--help/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
