// `cp .env.example .env && npm start` in a fresh clone: the dashboard is served, the APIs are ready on the
// Redis that npm start provisioned itself, and Ctrl-C (SIGINT to the process group, as a terminal sends
// it) stops everything it started: no process left, nothing listening.
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { freePort, isPortFree } from "../../scripts/lib/ports.mjs";
// @ts-expect-error plain .mjs helper without types
import { freshClone } from "../lib-clone.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
let clone: { dir: string; remove(): void };
let child: ChildProcess;
let out = "";
const started: { name: string; pid: number; port: number }[] = [];

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const waitFor = async (what: string, ok: () => boolean | Promise<boolean>, timeoutMs: number) => {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await ok()) return;
    if (child.exitCode !== null)
      throw new Error(`npm start exited (${child.exitCode}) before ${what}:\n${out}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}:\n${out.slice(-4000)}`);
};

let webPort = 0;
let apiPorts: number[] = [];

beforeAll(async () => {
  clone = freshClone(root);
  copyFileSync(path.join(clone.dir, ".env.example"), path.join(clone.dir, ".env"));
  webPort = await freePort();
  apiPorts = [await freePort(), await freePort()];
  // The shell's environment minus anything that would configure the stack: .env is the only config.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^npm_/i.test(k) && !/^(REDIS_URL|REDLOCK_URLS|DATABASE_URL|PORT|HOST|API_URLS)$/.test(k),
    ),
  );
  child = spawn("npm", ["start"], {
    cwd: clone.dir,
    // Ports moved off the defaults so a developer's own `npm start` does not collide with the test's.
    // The build reuses this checkout's turbo cache (same sources, same hashes) instead of rebuilding.
    env: {
      ...env,
      WEB_PORT: String(webPort),
      API_PORTS: apiPorts.join(","),
      TURBO_CACHE_DIR: path.join(root, ".turbo", "cache"),
      FORCE_COLOR: "0",
    },
    detached: true, // its own process group, like a terminal's foreground job
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  // Seconds when this checkout's build is in the turbo cache (npm test builds before this test runs);
  // a cold build of the dashboard on two busy cores takes minutes.
  await waitFor("the 'Lockyard is up' banner", () => out.includes("Lockyard is up"), 600_000);
  // "[lockyard] redis: redis-server pid 123 at redis://127.0.0.1:6379", "[lockyard] postgres: pid 456 at postgres://…:5433/…"
  for (const m of out.matchAll(/\[lockyard\] (\S+): (?:redis-server )?pid (\d+) at \S+?:(\d+)(?:\/|\s|$)/g))
    started.push({ name: m[1]!, pid: Number(m[2]), port: Number(m[3]) });
}, 630_000);

afterAll(() => {
  const kill = (pid: number) => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  };
  if (child?.pid && child.exitCode === null && child.signalCode === null) kill(-child.pid);
  for (const s of started) if (alive(s.pid)) kill(s.pid);
  clone?.remove();
});

describe("cp .env.example .env && npm start, in a fresh clone", () => {
  it("provisions its own Redis (and Redlock nodes), since .env.example sets nothing", () => {
    const names = started.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(["redis", "redlock-1", "redlock-2", "redlock-3"]));
    const redis = started.find((s) => s.name === "redis")!;
    expect(out).toMatch(new RegExp(`Redis:\\s+redis://127\\.0\\.0\\.1:${redis.port}\\s`));
  });

  it("serves the dashboard, and both APIs are ready on that Redis", async () => {
    const page = await fetch(`http://127.0.0.1:${webPort}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/Lockyard/);
    for (const port of apiPorts) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ ok: true, checks: { redis: "up", redlock: "up" } });
    }
  });

  it("stops everything it started on Ctrl-C: no process left, nothing listening", async () => {
    process.kill(-child.pid!, "SIGINT");
    await waitFor(
      "npm start to exit",
      () => child.exitCode !== null || child.signalCode !== null,
      30_000,
    ).catch((err) => {
      if (child.exitCode === null && child.signalCode === null) throw err;
    });
    const ports = [webPort, ...apiPorts, ...started.map((s) => s.port)];
    await waitFor(
      "every port to be free",
      async () => (await Promise.all(ports.map((p) => isPortFree(p)))).every(Boolean),
      10_000,
    ).catch(() => undefined);
    const listening = [];
    for (const p of ports) if (!(await isPortFree(p))) listening.push(p);
    expect(listening, "ports still listening").toEqual([]);
    expect(started.filter((s) => alive(s.pid)).map((s) => s.name)).toEqual([]);
  }, 60_000);
});
