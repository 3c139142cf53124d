import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocks, type Locks } from "../../src/index.js";
import { connect, sleep, uniq } from "../helpers.js";

let redis: Redis;
let locks: Locks;
beforeAll(() => {
  redis = connect();
  locks = createLocks({ redis });
});
afterAll(async () => {
  await locks.close();
  redis.disconnect();
});

describe("re-entry", () => {
  it("nested withLock on the same resource re-enters: same owner and token, count 2, key gone only at 0", async () => {
    const resource = uniq("nested");
    await locks.withLock(resource, async (outer) => {
      expect(outer.count).toBe(1);
      await locks.withLock(resource, async (inner) => {
        expect(inner.owner).toBe(outer.owner);
        expect(inner.token).toBe(outer.token);
        expect(inner.count).toBe(2);
        expect(await redis.hget(outer.key, outer.owner)).toBe("2");
      });
      expect(await redis.hget(outer.key, outer.owner)).toBe("1");
    });
    expect(await redis.exists(`lock:{${resource}}`)).toBe(0);
  });

  it("acquire inside a withLock scope re-enters; another resource does not inherit the owner", async () => {
    const resource = uniq("scoped");
    const otherResource = uniq("other");
    await locks.withLock(resource, async (outer) => {
      const inner = await locks.acquire(resource, { waitMs: 0 });
      expect(inner.owner).toBe(outer.owner);
      expect(inner.count).toBe(2);
      const other = await locks.acquire(otherResource);
      expect(other.owner).not.toBe(outer.owner);
      expect(await inner.release()).toBe("decremented");
      expect(await other.release()).toBe("released");
    });
  });

  it("without a scope, a second acquire of the same resource waits (no accidental re-entry)", async () => {
    const resource = uniq("noscope");
    const h = await locks.acquire(resource);
    expect(await locks.tryAcquire(resource)).toBeNull();
    await h.release();
  });

  it("an explicit owner re-enters; release decrements and refreshes the TTL; each re-entry refreshes it", async () => {
    const resource = uniq("explicit");
    // Bounds leave room for a loaded machine: each sleep may overshoot by a few hundred ms.
    const h1 = await locks.acquire(resource, { leaseMs: 800 });
    await sleep(250);
    const before = await redis.pttl(h1.key);
    const h2 = await locks.acquire(resource, { leaseMs: 800, owner: h1.owner });
    expect(h2.count).toBe(2);
    const afterReentry = await redis.pttl(h1.key);
    expect(before).toBeLessThan(560);
    expect(afterReentry).toBeGreaterThan(before);
    expect(afterReentry).toBeGreaterThan(650);
    await sleep(250);
    const beforeRelease = await redis.pttl(h1.key);
    expect(await h2.release()).toBe("decremented");
    const afterRelease = await redis.pttl(h1.key);
    expect(afterRelease).toBeGreaterThan(beforeRelease);
    expect(afterRelease).toBeGreaterThan(650);
    expect(await redis.hget(h1.key, h1.owner)).toBe("1");
    expect(await h1.release()).toBe("released");
    expect(await redis.exists(h1.key)).toBe(0);
  });

  it("a re-entry does not queue behind local waiters that wait for its own holder", async () => {
    const resource = uniq("noqueue");
    const h = await locks.acquire(resource);
    const waiter = locks.acquire(resource, { waitMs: 5_000 });
    await sleep(50);
    const start = performance.now();
    const inner = await locks.acquire(resource, { owner: h.owner, waitMs: 1_000 });
    expect(inner.count).toBe(2);
    expect(performance.now() - start).toBeLessThan(1_000);
    await inner.release();
    await h.release();
    await (await waiter).release();
  });

  it("concurrent scopes stay separate: two withLock chains never share an owner", async () => {
    const resource = uniq("separate");
    const owners: string[] = [];
    await Promise.all(
      [0, 1].map(() =>
        locks.withLock(resource, async (h) => {
          owners.push(h.owner);
          await sleep(20);
          const inner = await locks.acquire(resource, { waitMs: 0 });
          expect(inner.owner).toBe(h.owner);
          await inner.release();
        }),
      ),
    );
    expect(new Set(owners).size).toBe(2);
  });
});
