// Issue 12, defect 10: when the head of a resource's local queue leaves (its waitMs ran out), the next waiter
// must look at once. Before the fix it was woken without being told to try and, never having tried, slept up
// to retry.maxMs while the lock was free (a lease that runs out publishes no release message).
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LockTimeoutError } from "../../src/index.js";
import { connect, makeLocks, uniq } from "../helpers.js";

let redis: Redis;
let other: Redis;
beforeAll(async () => {
  redis = connect();
  other = connect();
  await Promise.all([redis.ping(), other.ping()]);
});
afterAll(() => {
  redis.disconnect();
  other.disconnect();
});

describe("the head waiter leaves the queue (defect 10)", () => {
  it("the next waiter gets the lock soon after it frees, well before retry.maxMs", async () => {
    const { locks: holderLocks } = makeLocks(other);
    const { locks, events } = makeLocks(redis, { retry: { maxMs: 10_000 } });
    const res = uniq("acct");
    // Another process holds the lock; its lease runs out 400 ms from now (no release message).
    await holderLocks.acquire(res, { leaseMs: 400 });
    const t0 = performance.now();
    const first = locks.acquire(res, { waitMs: 200 }).then(
      () => "acquired",
      (e: unknown) => e,
    );
    const second = locks.acquire(res, { waitMs: 15_000 }).then((h) => ({ h, at: performance.now() - t0 }));
    expect(await first).toBeInstanceOf(LockTimeoutError);
    const { h, at } = await second;
    expect(h.isHeld()).toBe(true);
    // Free from ~400 ms on; retry.maxMs is 10 s.
    expect(at).toBeLessThan(2_500);
    expect(events.filter((e) => e.type === "timeout")).toHaveLength(1);
    await h.release();
    await locks.close();
    await holderLocks.close();
  });
});
