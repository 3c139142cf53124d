import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LockReleasedError, LocksClosedError, LockTimeoutError } from "../../src/index.js";
import { connect, makeLocks, sleep, uniq } from "../helpers.js";

let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

describe("API surface", () => {
  it("handle fields; owner id is <instanceId>:<128-bit hex>; release results", async () => {
    const { locks } = makeLocks(redis, { instanceId: "api-1" });
    const resource = uniq("fields");
    const h = await locks.acquire(resource);
    expect(h.resource).toBe(resource);
    expect(h.key).toBe(`lock:{${resource}}`);
    expect(h.owner).toMatch(/^api-1:[0-9a-f]{32}$/);
    expect(h.count).toBe(1);
    expect(h.isHeld()).toBe(true);
    expect(h.signal.aborted).toBe(false);
    expect(await h.renew()).toBe(true);
    const h2 = await locks.acquire(resource, { owner: h.owner });
    expect(await h2.release()).toBe("decremented");
    expect(await h.release()).toBe("released");
    expect(h.isHeld()).toBe(false);
    await expect(h.release()).rejects.toBeInstanceOf(LockReleasedError);
    await locks.close();
  });

  it("the default owner instance id is hostname:pid", async () => {
    const { locks } = makeLocks(redis);
    const h = await locks.acquire(uniq("host"));
    expect(h.owner.startsWith(`${(await import("node:os")).hostname()}:${process.pid}:`)).toBe(true);
    await h.release();
    await locks.close();
  });

  it("acquire throws LockTimeoutError, tryAcquire returns null", async () => {
    const { locks } = makeLocks(redis);
    const resource = uniq("busy");
    const h = await locks.acquire(resource);
    await expect(locks.acquire(resource, { waitMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await locks.tryAcquire(resource)).toBeNull();
    await h.release();
    const h2 = await locks.tryAcquire(resource);
    expect(h2?.isHeld()).toBe(true);
    await h2!.release();
    await locks.close();
  });

  it("await using releases at the end of the scope, also after an explicit release", async () => {
    const { locks } = makeLocks(redis);
    const resource = uniq("using");
    let key = "";
    {
      await using h = await locks.acquire(resource);
      key = h.key;
      expect(await redis.exists(key)).toBe(1);
    }
    expect(await redis.exists(key)).toBe(0);
    {
      await using h = await locks.acquire(resource);
      await h.release();
    }
    await locks.close();
  });

  it("list(): owners with counts, pttl, lease and token; match filters; waiter marks are hidden", async () => {
    const { locks } = makeLocks(redis, { leaseMs: 5_000 });
    const base = uniq("list");
    const a = await locks.acquire(`${base}:a`);
    const a2 = await locks.acquire(`${base}:a`, { owner: a.owner });
    const b = await locks.acquire(`${base}:b`, { leaseMs: 2_000 });
    expect(await locks.tryAcquire(`${base}:b`)).toBeNull(); // marks ~waiters on b
    const all = await locks.list({ match: `${base}:*`, count: 1 });
    all.sort((x, y) => x.resource.localeCompare(y.resource));
    expect(all).toHaveLength(2);
    expect(all[0]).toMatchObject({
      key: `lock:{${base}:a}`,
      resource: `${base}:a`,
      owners: [{ owner: a.owner, count: 2 }],
      leaseMs: 5_000,
      token: a.token,
    });
    expect(all[0]!.pttlMs).toBeGreaterThan(4_000);
    expect(all[1]).toMatchObject({
      resource: `${base}:b`,
      owners: [{ owner: b.owner, count: 1 }],
      leaseMs: 2_000,
    });
    expect(await locks.list({ match: `${base}:b` })).toHaveLength(1);
    expect(await locks.list({ match: `${base}:*`, limit: 1 })).toHaveLength(1);
    await Promise.all([a2.release(), a.release(), b.release()]);
    expect(await locks.list({ match: `${base}:*` })).toEqual([]);
    await locks.close();
  });

  it("events: acquired {waitedMs, attempts}, released {heldMs}, contended, renewed", async () => {
    const { locks, events } = makeLocks(redis, { leaseMs: 300 });
    const resource = uniq("events");
    const h = await locks.acquire(resource);
    const waiting = locks.acquire(resource, { waitMs: 2_000 });
    await sleep(250); // past the first renewal at lease/3 = 100 ms
    await h.release();
    const h2 = await waiting;
    await h2.release();
    const mine = events.filter((e) => e.resource === resource);
    const acquired = mine.filter((e) => e.type === "acquired");
    expect(acquired).toHaveLength(2);
    expect(acquired[0]).toMatchObject({ attempts: 1, count: 1, owner: h.owner, token: h.token });
    expect(acquired[1]).toMatchObject({ owner: h2.owner });
    expect((acquired[1] as { waitedMs: number }).waitedMs).toBeGreaterThan(200);
    expect((acquired[1] as { attempts: number }).attempts).toBeGreaterThanOrEqual(2);
    const released = mine.filter((e) => e.type === "released");
    expect(released[0]).toMatchObject({ result: "released", heldMs: expect.any(Number) });
    expect((released[0] as { heldMs: number }).heldMs).toBeGreaterThan(200);
    expect(mine.some((e) => e.type === "contended")).toBe(true);
    expect(mine.some((e) => e.type === "renewed")).toBe(true);
    await locks.close();
  });

  it("a throwing onEvent listener does not break locking", async () => {
    const { locks } = makeLocks(redis, {
      onEvent: () => {
        throw new Error("listener bug");
      },
    });
    const h = await locks.acquire(uniq("listener"));
    expect(await h.release()).toBe("released");
    await locks.close();
  });

  it("close() rejects waiters and later calls with LocksClosedError; held locks then expire", async () => {
    const { locks } = makeLocks(redis, { leaseMs: 300 });
    const resource = uniq("close");
    const h = await locks.acquire(resource);
    const waiting = locks.acquire(resource, { waitMs: 5_000 });
    await sleep(50);
    await locks.close();
    await expect(waiting).rejects.toBeInstanceOf(LocksClosedError);
    await expect(locks.acquire(uniq("x"))).rejects.toBeInstanceOf(LocksClosedError);
    await expect(locks.tryAcquire(uniq("x"))).rejects.toBeInstanceOf(LocksClosedError);
    await expect(locks.withLock(uniq("x"), async () => 1)).rejects.toBeInstanceOf(LocksClosedError);
    await expect(locks.list()).rejects.toBeInstanceOf(LocksClosedError);
    await expect(h.release()).rejects.toBeInstanceOf(LocksClosedError);
    await sleep(400);
    expect(await redis.exists(h.key)).toBe(0);
    await locks.close();
  });
});
