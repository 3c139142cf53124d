// `npm run burst`: starts a burst, watches it, prints the report (--json), and fails fast without an API.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { freePort } from "../../../scripts/lib/ports.mjs";
import { type ApiProcess, startApis, stopApis } from "./servers.js";

const cli = fileURLToPath(new URL("../dist/cli/burst.js", import.meta.url));
let apis: ApiProcess[];

beforeAll(async () => {
  apis = await startApis(inject("redisUrl"), 1, { JOB_INTERVAL_MS: "3600000" });
});
afterAll(() => stopApis(apis ?? []));

function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const options = { timeout: 60_000, env: { ...process.env, ...env } };
    execFile(process.execPath, [cli, ...args], options, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

it("prints the report as JSON and exits 0 when a safe mode did not oversell", async () => {
  const r = await run([
    "--mode",
    "redis",
    "--requests",
    "20",
    "--initial-stock",
    "10",
    "--product",
    "demo-cli",
    "--url",
    apis[0]!.url,
    "--json",
  ]);
  expect(r.code).toBe(0);
  const report = JSON.parse(r.stdout) as {
    runId: string;
    successes: number;
    finalStock: number;
    oversold: number;
  };
  expect(report).toMatchObject({ successes: 10, finalStock: 0, oversold: 0 });
  expect(report.runId).toMatch(/^[0-9a-f]{16}$/);
});

it("an unsafe mode's oversell is the expected lesson, not a failure", async () => {
  const r = await run([
    "--mode",
    "none",
    "--requests",
    "20",
    "--initial-stock",
    "10",
    "--product",
    "demo-cli",
    "--url",
    apis[0]!.url,
    "--json",
  ]);
  expect(r.code).toBe(0);
  expect((JSON.parse(r.stdout) as { oversold: number }).oversold).toBeGreaterThan(0);
});

it("fails fast with a clear message when the API is down, and on bad arguments", async () => {
  const down = await run(["--mode", "redis", "--url", `http://127.0.0.1:${await freePort()}`]);
  expect(down.code).toBe(3);
  expect(down.stderr).toMatch(/cannot reach the API/);
  const bad = await run(["--mode", "nope"]);
  expect(bad.code).toBe(2);
});

it("bad arguments exit 2 with a message and the usage, never a stack trace", async () => {
  for (const args of [
    ["--mode", "redis", "--bogus"],
    ["--mode", "redis", "stray"],
    ["--mode"],
    ["--mode", "redis", "--requests", "0x10"],
    ["--mode", "redis", "--initial-stock", "1e1"],
  ]) {
    const r = await run(args);
    expect(r.code, args.join(" ")).toBe(2);
    expect(r.stderr, args.join(" ")).toMatch(/usage: npm run burst/);
    expect(r.stderr, args.join(" ")).not.toMatch(/\n\s+at /);
  }
});

it("does not judge the server's environment: a bad LOCK_LEASE_MS is none of its business", async () => {
  const down = await run(["--mode", "redis", "--url", `http://127.0.0.1:${await freePort()}`], {
    LOCK_LEASE_MS: "abc",
    REDIS_URL: "garbage",
  });
  expect(down.code).toBe(3);
  expect(down.stderr).toMatch(/cannot reach the API/);
});
