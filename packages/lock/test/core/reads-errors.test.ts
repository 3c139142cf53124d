// Issue 12, defect 7: a `reads` function that throws, or returns something other than a promise, is the
// caller's bug. It must neither orphan the lock the attempt was granted (held for its lease by nobody) nor
// surface as an unhandled rejection: the lock is free again at once and the error reaches the caller.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { fenceKey, InvalidOptionError, lockKey, type ReadsFn } from "../../src/index.js";
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

/** The attempt ran in Redis (it took a token) and the lock is free again. */
async function expectFreeAfterGrant(res: string) {
  await vi.waitFor(
    async () => {
      expect(await other.exists(fenceKey(res))).toBe(1);
      expect(await other.exists(lockKey("lock:", res))).toBe(0);
    },
    { timeout: 1_000, interval: 10 },
  );
  const { locks: theirs } = makeLocks(other);
  const h = await theirs.tryAcquire(res);
  expect(h).not.toBeNull();
  await h!.release();
  await theirs.close();
}

describe("a broken reads function (defect 7)", () => {
  it("one that throws: acquire rejects with its error and the granted lock is released at once", async () => {
    const { locks, events } = makeLocks(redis);
    const res = uniq("stock");
    const boom = new Error("reads blew up");
    const reads = (() => {
      throw boom;
    }) as ReadsFn;
    const outcome = await locks.acquire(res, { reads }).then(
      () => "acquired",
      (e: unknown) => e,
    );
    expect(outcome).toBe(boom);
    await expectFreeAfterGrant(res);
    expect(events.filter((e) => e.type === "acquired")).toEqual([]);
    await locks.close();
  });

  it("one that returns a non-promise: acquire rejects with InvalidOptionError and the lock is released", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("stock");
    const reads = (() => 42) as unknown as ReadsFn;
    const outcome = await locks.acquire(res, { reads }).then(
      () => "acquired",
      (e: unknown) => e,
    );
    expect(outcome).toBeInstanceOf(InvalidOptionError);
    await expectFreeAfterGrant(res);
    await locks.close();
  });

  it("withLock with a throwing reads never runs its callback and leaves the lock free", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("stock");
    const boom = new Error("reads blew up");
    let ran = false;
    const outcome = await locks
      .withLock(
        res,
        () => {
          ran = true;
        },
        {
          reads: (() => {
            throw boom;
          }) as ReadsFn,
        },
      )
      .catch((e: unknown) => e);
    expect(outcome).toBe(boom);
    expect(ran).toBe(false);
    await expectFreeAfterGrant(res);
    await locks.close();
  });
});
