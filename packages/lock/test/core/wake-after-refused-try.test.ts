// Found by the simulation's tighter lost-wake-up bound (seed 441): a waiter that queued while another call's
// one-shot attempt (tryAcquire, or acquire with waitMs 0) was in flight never tried itself, so it had not
// subscribed; the refusal marked the lock as waited for and left the head asleep for a release message it
// could not hear. It slept its whole wait (up to retry.maxMs) while the lock was free.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, makeLocks, uniq } from "../helpers.js";

let redis: Redis;
let other: Redis;
beforeAll(() => {
  redis = connect();
  other = connect();
});
afterAll(() => {
  redis.disconnect();
  other.disconnect();
});

describe("a waiter queued behind a refused one-shot attempt", () => {
  it.each([
    ["tryAcquire", true],
    ["acquire with waitMs 0", false],
  ] as const)("after %s, gets the lock once it is released, well within its wait", async (_, useTry) => {
    // A fallback timer longer than the wait: only a look prompted by the release can get the lock in time.
    const { locks } = makeLocks(redis, { retry: { minMs: 60_000, maxMs: 60_000, jitterMs: 0 } });
    const { locks: theirs } = makeLocks(other);
    const res = uniq("queued");
    const held = await theirs.acquire(res);

    const oneShot = useTry
      ? locks.tryAcquire(res)
      : locks.acquire(res, { waitMs: 0 }).catch((e: unknown) => (e as Error).name);
    // Queued locally behind the attempt in flight: it sends nothing of its own yet.
    const waiter = locks.acquire(res, { waitMs: 3_000 });
    expect(await oneShot).toEqual(useTry ? null : "LockTimeoutError");

    await held.release();
    const h = await waiter;
    expect(h.isHeld()).toBe(true);
    await h.release();
    await locks.close();
    await theirs.close();
  });
});

// Found by the simulation with --extra (seed 2441): a waiter became head when the waiter before it was
// granted (with more queued, so the release would publish). It never tried itself, so it knew no PTTL; the
// holder's fixed lease then ran out, which publishes nothing, and the head slept its whole wait.
describe("a head that never tried, behind a local grant whose lease runs out unreleased", () => {
  it("looks again when that lease ends, not only after retry.maxMs", async () => {
    const { locks } = makeLocks(redis, { retry: { minMs: 5, maxMs: 60_000, jitterMs: 0 } });
    const { locks: theirs } = makeLocks(other);
    const res = uniq("expiring");
    const held = await theirs.acquire(res);
    const first = locks.acquire(res, { leaseMs: 300, waitMs: 5_000 });
    const second = locks.acquire(res, { waitMs: 3_000 });
    await new Promise((r) => setTimeout(r, 50));
    await held.release();
    const h1 = await first; // never released: its 300 ms lease runs out in Redis, silently
    expect(h1.count).toBe(1);
    const h2 = await second;
    expect(h2.isHeld()).toBe(true);
    await h2.release();
    await locks.close();
    await theirs.close();
  });
});
