import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LockLostError } from "../../src/index.js";
import { connect, makeLocks, sleep, uniq } from "../helpers.js";

let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

describe("lost lock", () => {
  it("the key deleted from outside: the next renewal answers 0, the signal aborts, a lost event, isHeld false", async () => {
    const { locks, events } = makeLocks(redis, { leaseMs: 600 });
    const h = await locks.acquire(uniq("deleted"));
    const aborted = new Promise<unknown>((resolve) =>
      h.signal.addEventListener("abort", () => resolve(h.signal.reason)),
    );
    await redis.del(h.key);
    const reason = await aborted;
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe("renew-refused");
    expect(h.isHeld()).toBe(false);
    expect(events.find((e) => e.type === "lost")).toMatchObject({
      resource: h.resource,
      reason: "renew-refused",
    });
    expect(await h.renew()).toBe(false);
    expect(await h.release()).toBe("not-owner");
    await locks.close();
  });

  it("taken by someone else after a forced expiry: renew answers 0", async () => {
    const { locks } = makeLocks(redis, { leaseMs: 600 });
    const h = await locks.acquire(uniq("stolen"));
    await redis.del(h.key);
    await redis.hset(h.key, "thief:1", 1);
    await redis.pexpire(h.key, 5_000);
    expect(await h.renew()).toBe(false);
    expect(h.signal.aborted).toBe(true);
    expect(await h.release()).toBe("not-owner");
    expect(await redis.hget(h.key, "thief:1")).toBe("1");
    await locks.close();
  });

  it("no renewal succeeds before the local deadline (Redis paused): lost with reason deadline", async () => {
    const { locks, events } = makeLocks(redis, { leaseMs: 300 });
    const h = await locks.acquire(uniq("paused"));
    const t0 = performance.now();
    await redis.call("client", "pause", "700", "ALL");
    await new Promise((resolve) => h.signal.addEventListener("abort", resolve));
    const lostAfter = performance.now() - t0;
    // Lost locally around the lease, while Redis is still paused.
    expect(lostAfter).toBeLessThan(650);
    expect((h.signal.reason as LockLostError).reason).toBe("deadline");
    expect(events.some((e) => e.type === "lost")).toBe(true);
    expect(h.isHeld()).toBe(false);
    await sleep(500);
    await h.release();
    await locks.close();
  });

  it("withLock rejects with LockLostError after its callback settles", async () => {
    const { locks } = makeLocks(redis, { leaseMs: 600 });
    let finished = false;
    const run = locks.withLock(uniq("wl"), async (lock) => {
      await redis.del(lock.key);
      await sleep(500);
      expect(lock.signal.aborted).toBe(true);
      finished = true;
      return "done";
    });
    const err = await run.catch((e) => e);
    expect(finished).toBe(true);
    expect(err).toBeInstanceOf(LockLostError);
    expect(err.name).toBe("LockLostError");
    await locks.close();
  });

  it("withLock with an explicit lease that overruns rejects with LockLostError (expired)", async () => {
    const { locks } = makeLocks(redis);
    const err = await locks.withLock(uniq("overrun"), () => sleep(350), { leaseMs: 200 }).catch((e) => e);
    expect(err).toBeInstanceOf(LockLostError);
    expect(err.reason).toBe("expired");
    await locks.close();
  });

  it("a release error never masks the callback's own error", async () => {
    const own = connect();
    const { locks } = makeLocks(own);
    const boom = new Error("callback failed");
    const err = await locks
      .withLock(uniq("mask"), async () => {
        own.disconnect(); // the release that follows cannot reach Redis
        throw boom;
      })
      .catch((e) => e);
    expect(err).toBe(boom);
    await locks.close();
  });

  it("when the callback succeeds but the release fails, the release error surfaces", async () => {
    const own = connect();
    const { locks } = makeLocks(own);
    const err = await locks
      .withLock(uniq("relfail"), async () => {
        own.disconnect();
        return 1;
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String(err.message)).toMatch(/closed/i);
    await locks.close();
  });
});
