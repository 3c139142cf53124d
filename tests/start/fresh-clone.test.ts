// `cp .env.example .env && npm start` in a fresh clone: the dashboard is served, the APIs are ready on the
// Redis that npm start provisioned itself, and Ctrl-C (SIGINT to the process group, as a terminal sends
// it) stops everything it started: no process left, nothing listening.
import { copyFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { freePort } from "../../scripts/lib/ports.mjs";
// @ts-expect-error plain .mjs helper without types
import { freshClone } from "../lib-clone.mjs";
import { cleanEnv, type Stack, type Started, startStack } from "../lib-start.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
let clone: { dir: string; remove(): void };
let stack: Stack;
let started: Started[] = [];
let webPort = 0;
let apiPorts: number[] = [];

beforeAll(async () => {
  clone = freshClone(root);
  copyFileSync(path.join(clone.dir, ".env.example"), path.join(clone.dir, ".env"));
  webPort = await freePort();
  apiPorts = [await freePort(), await freePort()];
  // Only .env configures the stack. Ports moved off the defaults so a developer's own `npm start` does not
  // collide with the test's; the build reuses this checkout's turbo cache (same sources, same hashes).
  stack = startStack("npm", ["start"], clone.dir, {
    ...cleanEnv(),
    WEB_PORT: String(webPort),
    API_PORTS: apiPorts.join(","),
    TURBO_CACHE_DIR: path.join(root, ".turbo", "cache"),
  });
  // Seconds when this checkout's build is in the turbo cache (npm test builds before this test runs);
  // a cold build of the dashboard on two busy cores takes minutes.
  await stack.waitFor(
    "the 'Lockyard is up' banner",
    () => stack.output().includes("Lockyard is up"),
    600_000,
  );
  // "[lockyard] redis: redis-server pid 123 at redis://127.0.0.1:6379", "[lockyard] postgres: pid 456 at postgres://…:5433/…"
  started = stack.started();
}, 630_000);

afterAll(() => {
  stack?.kill();
  clone?.remove();
});

describe("cp .env.example .env && npm start, in a fresh clone", () => {
  it("provisions its own Redis (and Redlock nodes), since .env.example sets nothing", () => {
    const names = started.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(["redis", "redlock-1", "redlock-2", "redlock-3"]));
    const redis = started.find((s) => s.name === "redis")!;
    expect(stack.output()).toMatch(new RegExp(`Redis:\\s+redis://127\\.0\\.0\\.1:${redis.port}\\s`));
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
    const { listening, alive } = await stack.interrupt([webPort, ...apiPorts]);
    expect(listening, "ports still listening").toEqual([]);
    expect(alive).toEqual([]);
  }, 60_000);
});
