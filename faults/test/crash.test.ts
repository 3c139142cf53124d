// Scenario 2: the holding process is SIGKILLed. The lock must be free within lease + one renew
// interval, and a waiter must get it (no deadlock): while held, while re-entered, and mid-acquire.
import { setTimeout as sleep } from "node:timers/promises";
import { createLocks, type Locks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Source } from "../src/checker.js";
import { Holder } from "../src/child.js";
import { assertNoTwoHolders, figure } from "../src/figures.js";
import { recorded } from "../src/recorder.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";

const LEASE_MS = 400;
const RENEW_MS = LEASE_MS / 3;
let server: RedisServer;
let waiter: ReturnType<typeof recorded<Redis>>;
let locks: Locks;

beforeAll(async () => {
  server = await startRedis();
  waiter = recorded(new Redis(server.url), "waiter");
  locks = createLocks({ redis: waiter.redis, leaseMs: LEASE_MS, instanceId: "waiter" });
});
afterAll(async () => {
  await locks?.close();
  waiter?.redis.disconnect();
  await server?.stop();
});

type Mode = "held" | "re-entered" | "mid-acquire";
const plan: Mode[] = [
  "held",
  "held",
  "held",
  "held",
  "held",
  "held",
  "re-entered",
  "re-entered",
  "mid-acquire",
  "mid-acquire",
];

it(`a SIGKILLed holder's lock is free within lease + one renew interval (${plan.length} runs)`, async () => {
  const sources: Source[] = [];
  const freedAfter: number[] = [];
  for (const [i, mode] of plan.entries()) {
    const resource = `crash:${i}`;
    const holder = await Holder.start(`crashed-${i}`, { redisUrl: server.url, leaseMs: LEASE_MS });
    let waiting: Promise<unknown> | undefined;
    if (mode === "mid-acquire") {
      // Killed right after being told to acquire: whether it got the lock is unknown.
      void holder.send("acquire", { resource, opts: {} });
      await sleep(Math.random() * 3);
    } else {
      const a = await holder.call("acquire", { resource, opts: {} });
      if (mode === "re-entered") {
        const again = await holder.call("acquire", { name: "inner", resource, opts: { owner: a.owner } });
        expect(again.count).toBe(2);
      }
      waiting = locks.acquire(resource, { waitMs: 5_000 });
      // Die at a random point of the renewal cycle.
      await sleep(50 + Math.random() * LEASE_MS);
    }
    holder.signal("SIGKILL");
    const killedAt = performance.now();
    const h = await ((waiting as ReturnType<Locks["acquire"]>) ?? locks.acquire(resource, { waitMs: 5_000 }));
    freedAfter.push(performance.now() - killedAt);
    await h.release();
    sources.push(holder.source());
    await holder.stop();
  }
  const worst = Math.max(...freedAfter);
  figure(
    `crash: ${freedAfter.filter((ms) => ms <= LEASE_MS + RENEW_MS).length}/${plan.length} locks free within lease + renew interval ` +
      `(${LEASE_MS} + ${Math.round(RENEW_MS)} ms; slowest ${Math.round(worst)} ms, no deadlock)`,
  );
  expect(worst).toBeLessThanOrEqual(LEASE_MS + RENEW_MS);
  assertNoTwoHolders("crash", [...sources, waiter.source()]);
});
