// `npm start` refusing what cannot work: at once, before provisioning or building, for settings it can judge;
// and at once, with the dead service's last lines, when a service dies while starting.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { freePort } from "../../scripts/lib/ports.mjs";
import { cleanEnv, type Stack, startStack } from "../lib-start.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const startJs = path.join(root, "scripts/start.mjs");

/** Ports nothing listens on: the stack is pointed at them so that it provisions nothing. */
async function closedServices(): Promise<Record<string, string>> {
  const [redis, redlock, pg] = [await freePort(), await freePort(), await freePort()];
  return {
    REDIS_URL: `redis://127.0.0.1:${redis}`,
    REDLOCK_URLS: `redis://127.0.0.1:${redlock}`,
    DATABASE_URL: `postgres://postgres@127.0.0.1:${pg}/none`,
  };
}

function start(
  env: Record<string, string>,
  at = { root, args: [startJs] },
): Promise<{ code: number | null; out: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let out = "";
    const child = spawn(process.execPath, at.args, {
      cwd: at.root,
      env: { ...cleanEnv(), FORCE_COLOR: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own group: a start that does not refuse is killed with the services it started.
      detached: true,
    });
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 30_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out, ms: performance.now() - t0 });
    });
  });
}

describe("settings refused before anything starts", () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ["a REDIS_URL that is no URL", { REDIS_URL: "garbage" }, /the API would refuse .*REDIS_URL: Invalid URL/],
    ["a LOCK_LEASE_MS that is no number", { LOCK_LEASE_MS: "abc" }, /LOCK_LEASE_MS: .*expected number/],
    ["an API port twice", { API_PORTS: "17441,17441" }, /lists port 17441 twice/],
    [
      "the dashboard on an API's port",
      { API_PORTS: "17441,17442", WEB_PORT: "17441" },
      /is also in API_PORTS/,
    ],
    ["two dashboard ports", { WEB_PORT: "17440,17445" }, /set WEB_PORT to a single port/],
  ];
  for (const [what, env, message] of cases) {
    it(`refuses ${what} in seconds, with one message and no stack`, async () => {
      const r = await start({
        API_PORTS: "17441,17442",
        WEB_PORT: "17440",
        ...(await closedServices()),
        ...env,
      });
      expect(r.code).toBe(1);
      expect(r.out).toMatch(message);
      expect(r.out).not.toMatch(/building|\n\s+at /);
      expect(r.ms).toBeLessThan(15_000);
    });
  }
});

describe("a .env line Node would misread", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "lockyard-dotenv-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // The repository with a .env of its own: start.mjs finds its root from where it is run (symlinks kept).
  for (const f of ["scripts", "package.json", "package-lock.json", "node_modules"])
    symlinkSync(path.join(root, f), path.join(dir, f));
  const at = {
    root: dir,
    args: ["--preserve-symlinks", "--preserve-symlinks-main", path.join(dir, "scripts/start.mjs")],
  };

  for (const [what, text, message] of [
    [
      "a line that is no setting",
      "WEB_PORT=17440\ngarbage line\nLOCK_LEASE_MS=5000\n",
      /\.env line 2 \("garbage line"\) is not KEY=VALUE/,
    ],
    ["an unclosed quote", 'ADMIN_TOKEN="abc\n', /\.env line 1 .* opens a " quote it never closes/],
  ] as const) {
    it(`refuses ${what}, naming the line`, async () => {
      writeFileSync(path.join(dir, ".env"), text);
      // Set in the shell so that a start reading past the .env stops right after, at the ports.
      const r = await start({ API_PORTS: "abc" }, at);
      expect(r.code).toBe(1);
      expect(r.out).toMatch(message);
      expect(r.out).not.toMatch(/API_PORTS/);
    });
  }
});

describe("a service that dies while starting", () => {
  let stack: Stack | undefined;
  afterAll(() => stack?.kill());

  it("stops everything at once, shows that service's last lines and exits 1", async () => {
    // No address of this machine: the APIs and the dashboard all fail to listen, after the build.
    stack = startStack(process.execPath, [startJs], root, {
      ...cleanEnv(),
      ...(await closedServices()),
      API_PORTS: "17451,17452",
      WEB_PORT: "17450",
      HOST: "10.255.255.1",
    });
    await stack.waitFor("the stack to exit", () => stack!.child.exitCode !== null, 600_000).catch(() => {});
    const out = stack.output();
    expect(stack.child.exitCode, out).toBe(1);
    expect(out).toMatch(/\[lockyard\] (api-\d|web) exited with code 1 while starting; its last lines:\n {4}/);
    expect(out).toMatch(/EADDRNOTAVAIL|not an address of this machine/);
    expect(out).not.toMatch(/Lockyard is up/);
    expect(out).not.toMatch(/timed out/);
  }, 630_000);
});
