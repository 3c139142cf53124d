// Issue 12, defect 2: a release that finds another owner (or none) means the holder was not protected up to
// its release. withLock must not resolve normally: it rejects with LockLostError and `lost` is emitted, for
// watchdog and fixed leases alike.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LockHandle, LockLostError } from "../../src/index.js";
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

describe("a not-owner release of a held handle is a loss (defect 2)", () => {
  it.each([
    ["watchdog lease", undefined],
    ["fixed lease", 5_000],
  ] as const)(
    "%s: withLock rejects with LockLostError and emits lost when the key was taken meanwhile",
    async (_, leaseMs) => {
      const { locks, events } = makeLocks(redis);
      const { locks: theirs } = makeLocks(other);
      const res = uniq("acct");
      let handle: LockHandle | undefined;
      const outcome = await locks
        .withLock(
          res,
          async (lock) => {
            handle = lock;
            // The key vanishes (eviction, a FLUSH, an operator…); another process takes the lock and lets go.
            await other.del(lock.key);
            const h2 = await theirs.acquire(res, { waitMs: 1_000 });
            await h2.release();
            return "sold";
          },
          leaseMs === undefined ? undefined : { leaseMs },
        )
        .then(
          (v) => ({ resolved: v }),
          (e: unknown) => e,
        );
      expect(outcome).toBeInstanceOf(LockLostError);
      expect((outcome as LockLostError).reason).toBe("not-owner-at-release");
      const lost = events.filter((e) => e.type === "lost");
      expect(lost).toHaveLength(1);
      expect(lost[0]).toMatchObject({ resource: res, reason: "not-owner-at-release" });
      expect(handle!.signal.aborted).toBe(true);
      await locks.close();
      await theirs.close();
    },
  );

  it("the same when the other owner still holds the key at release time (fixed lease)", async () => {
    const { locks, events } = makeLocks(redis);
    const { locks: theirs } = makeLocks(other);
    const res = uniq("acct");
    let h2: LockHandle | undefined;
    const outcome = await locks
      .withLock(
        res,
        async (lock) => {
          await other.del(lock.key);
          h2 = await theirs.acquire(res, { waitMs: 1_000 });
        },
        { leaseMs: 5_000 },
      )
      .then(
        () => "resolved",
        (e: unknown) => e,
      );
    expect(outcome).toBeInstanceOf(LockLostError);
    expect(events.some((e) => e.type === "lost")).toBe(true);
    // The other owner's lock is untouched by our release.
    expect(h2!.isHeld()).toBe(true);
    expect(await redis.hget(h2!.key, h2!.owner)).toBe("1");
    await h2!.release();
    await locks.close();
    await theirs.close();
  });
});
