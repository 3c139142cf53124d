import { describe, expect, it } from "vitest";
import { parseBurstArgs } from "./burst-args.js";

const parse = (...argv: string[]) => parseBurstArgs(argv, undefined);

describe("npm run burst's arguments", () => {
  it("refuses unknown options, positionals and an option without its value, naming them", () => {
    expect(parse("--mode", "redis", "--bogus")).toEqual({
      kind: "error",
      message: expect.stringMatching(/--bogus/),
    });
    expect(parse("--mode", "redis", "stray")).toEqual({
      kind: "error",
      message: expect.stringMatching(/stray/),
    });
    expect(parse("--mode")).toEqual({ kind: "error", message: expect.stringMatching(/--mode/) });
  });

  it("takes counts in decimal digits only", () => {
    for (const bad of ["0x10", "1e1", "-1", "1.5", " 7", ""])
      expect(parse("--mode", "redis", `--requests=${bad}`), bad).toEqual({
        kind: "error",
        message: `--requests must be a whole number, got "${bad}"`,
      });
    expect(parse("--mode", "redis", "--initial-stock", "1e1")).toMatchObject({ kind: "error" });
    expect(parse("--mode", "redis", "--requests", "16", "--initial-stock", "10")).toMatchObject({
      kind: "run",
      input: { requests: 16, initialStock: 10 },
    });
  });

  it("reads the admin token from ADMIN_TOKEN unless --admin-token is given", () => {
    expect(parseBurstArgs(["--mode", "redis"], "from-env")).toMatchObject({ token: "from-env" });
    expect(parseBurstArgs(["--mode", "redis", "--admin-token", "flag"], "from-env")).toMatchObject({
      token: "flag",
    });
    expect(parseBurstArgs(["--mode", "redis"], "")).toMatchObject({ token: undefined });
  });

  it("--help, and a bad mode or URL", () => {
    expect(parse("--help")).toEqual({ kind: "help" });
    expect(parse("--mode", "nope")).toMatchObject({ kind: "error" });
    expect(parse("--mode", "redis", "--url", "ftp://x")).toMatchObject({ kind: "error" });
  });
});
