// A sleeping waiter keeps its process alive (waiters.ts sleep, Clock.keepAlive); close() must let it go: a
// process whose only work was that wait exits once close() rejected it, not when its waitMs would have ended.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { connect, makeLocks, uniq } from "../helpers.js";

const WORKER = fileURLToPath(new URL("./close-exit-worker.mjs", import.meta.url));
let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

it("close() lets the process go: one whose waiter slept (waitMs 20 s) exits as close() rejects it", async () => {
  const { locks } = makeLocks(redis);
  const resource = uniq("close-exit");
  const held = await locks.acquire(resource);
  const child = fork(WORKER, [], {
    env: { ...process.env, REDIS_URL: inject("redisUrl"), RESOURCE: resource },
    stdio: "inherit",
  });
  const outcomes: string[] = [];
  child.on("message", (m: { outcome: string }) => outcomes.push(m.outcome));
  const exited = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      child.kill();
      resolve(-1);
    }, 10_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  expect(outcomes).toEqual(["LocksClosedError"]);
  expect(exited).toBe(0);
  await held.release();
  await locks.close();
});
