import { createHook } from "node:async_hooks";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandStats, connect, makeLocks, sleep, uniq } from "../helpers.js";

let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

describe("watchdog", () => {
  it("with no explicit leaseMs, a hold of 3x the lease keeps the lock and its PTTL jumps back", async () => {
    const { locks, events } = makeLocks(redis, { leaseMs: 600 });
    const resource = uniq("watchdog");
    const h = await locks.acquire(resource);
    const samples: number[] = [];
    const end = performance.now() + 1_800;
    while (performance.now() < end) {
      samples.push(await redis.pttl(h.key));
      await sleep(25);
    }
    expect(h.isHeld()).toBe(true);
    expect(await redis.hget(h.key, h.owner)).toBe("1");
    expect(Math.min(...samples)).toBeGreaterThan(0);
    const jumps = samples.filter((v, i) => i > 0 && v > samples[i - 1]! + 50).length;
    expect(jumps).toBeGreaterThanOrEqual(4);
    expect(events.filter((e) => e.type === "renewed").length).toBeGreaterThanOrEqual(4);
    expect(await h.release()).toBe("released");
    await locks.close();
  });

  it("with an explicit leaseMs there is no renewal and the lock expires on time", async () => {
    const { locks, events } = makeLocks(redis, { leaseMs: 600 });
    const resource = uniq("fixed");
    const h = await locks.acquire(resource, { leaseMs: 400 });
    await sleep(300);
    expect(await redis.pttl(h.key)).toBeLessThan(150);
    await sleep(200);
    expect(await redis.exists(h.key)).toBe(0);
    expect(events.filter((e) => e.type === "renewed")).toHaveLength(0);
    expect(h.isHeld()).toBe(false);
    await locks.close();
  });

  it("one scheduler renews many locks in batched calls", async () => {
    const { locks, events } = makeLocks(redis, { leaseMs: 600 });
    const handles = await Promise.all(Array.from({ length: 30 }, () => locks.acquire(uniq("many"))));
    const before = await commandStats(redis);
    await sleep(1_200);
    const after = await commandStats(redis);
    const renewed = events.filter((e) => e.type === "renewed").length;
    const calls = after.evalsha! - before.evalsha!;
    // 30 locks renewed about 6 times each would be ~180 calls one by one.
    expect(renewed).toBeGreaterThanOrEqual(30 * 4);
    expect(calls).toBeLessThanOrEqual(12);
    for (const h of handles) expect(await redis.pttl(h.key)).toBeGreaterThan(250);
    await Promise.all(handles.map((h) => h.release()));
    await locks.close();
  });

  it("its single timer is unref'd, cleared on the last release, and after close() at the held locks' deadline", async () => {
    const { locks } = makeLocks(redis, { leaseMs: 600 });
    // Watch every Timeout created from here on: the scheduler's, and the sleeps of this test (which fire).
    const live = new Map<number, NodeJS.Timeout>();
    const hook = createHook({
      init(id, type, _trigger, resource) {
        if (type === "Timeout") live.set(id, resource as NodeJS.Timeout);
      },
      destroy(id) {
        live.delete(id);
      },
    }).enable();
    // A fired or cleared timer may reach the destroy hook late; Node marks it `_destroyed` at once.
    const pending = () =>
      [...live.values()].filter((t) => !(t as unknown as { _destroyed: boolean })._destroyed);
    const settle = () => sleep(20);
    try {
      const a = await locks.acquire(uniq("t"));
      const b = await locks.acquire(uniq("t"), { leaseMs: 500 });
      await settle();
      expect(pending().length).toBe(1);
      expect(pending().every((t) => !t.hasRef())).toBe(true);
      await a.release();
      await settle();
      expect(pending().length).toBe(1);
      await b.release();
      await settle();
      expect(pending().length).toBe(0);
      await locks.acquire(uniq("t"));
      await settle();
      expect(pending().length).toBe(1);
      await locks.close();
      await settle();
      // Closed with a lock held: no renewals, but the timer stays (unref'd) to declare it lost at its deadline.
      expect(pending().length).toBe(1);
      expect(pending().every((t) => !t.hasRef())).toBe(true);
      await sleep(650);
      expect(pending().length).toBe(0);
    } finally {
      hook.disable();
    }
  });
});
