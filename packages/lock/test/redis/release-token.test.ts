// A release names the token its hold was granted with (redis/scripts/release.ts). Found by the simulation
// with key loss (seed 47 of `test:sim -- --key-loss`): the key of a held lock vanished, a re-entry of the same
// owner created it afresh (count 1), and the old hold's release, already on its way, took that count: the lock
// was deleted under the live re-entry. Owner names are reused by explicit-owner re-entry, so the owner check
// alone cannot tell the two grants apart; the fence counter can.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LockLostError } from "../../src/index.js";
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

describe("a release of a hold whose key was granted afresh since", () => {
  it.each([
    ["watchdog lease", undefined],
    ["fixed lease", 5_000],
  ] as const)("%s: is a loss, and leaves the newer grant's count alone", async (_, leaseMs) => {
    const { locks } = makeLocks(redis);
    // Another Locks with the same owner name: its fresh grant is not seen by the first one's bookkeeping,
    // so only the script can refuse the old release (as when the release was sent before the new grant).
    const { locks: again } = makeLocks(other);
    const res = uniq("acct");
    const old = await locks.acquire(res, leaseMs === undefined ? {} : { leaseMs });
    await other.del(old.key); // evicted, FLUSHed, lost in a failover
    const fresh = await again.acquire(res, { owner: old.owner, waitMs: 0 });
    expect(fresh.count).toBe(1);
    expect(fresh.token!).toBeGreaterThan(old.token!);

    const lost = old.signal;
    expect(await old.release()).toBe("not-owner");
    expect(lost.reason).toBeInstanceOf(LockLostError);
    expect((lost.reason as LockLostError).reason).toBe("not-owner-at-release");
    expect(await redis.hget(fresh.key, fresh.owner)).toBe("1");
    expect(fresh.isHeld()).toBe(true);
    await fresh.release();
    expect(await redis.exists(fresh.key)).toBe(0);
    await locks.close();
    await again.close();
  });

  // Found by the simulation's 100 000-seed run, in one process: the re-entry's grant is seen here, so the
  // older hold is lost at once (not only at its release), and its release is not even sent.
  it("in one Locks: the older hold is lost as soon as the re-entry is granted afresh", async () => {
    const { locks, events } = makeLocks(redis);
    const res = uniq("acct");
    const old = await locks.acquire(res, { leaseMs: 5_000 });
    await other.del(old.key);
    const fresh = await locks.acquire(res, { owner: old.owner, waitMs: 0 });
    expect(fresh.count).toBe(1);
    expect(old.isHeld()).toBe(false);
    expect(events).toContainEqual(
      expect.objectContaining({ type: "lost", owner: old.owner, reason: "expired" }),
    );
    expect(await old.release()).toBe("not-owner");
    expect(await redis.hget(fresh.key, fresh.owner)).toBe("1");
    expect(await fresh.release()).toBe("released");
    await locks.close();
  });

  it("a re-entry of the same grant still releases count by count", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("acct");
    const outer = await locks.acquire(res);
    const inner = await locks.acquire(res, { owner: outer.owner });
    expect(inner.token).toBe(outer.token);
    await inner.release();
    expect(await redis.hget(outer.key, outer.owner)).toBe("1");
    await outer.release();
    expect(await redis.exists(outer.key)).toBe(0);
    await locks.close();
  });
});
