// Issue 12, defect 6: waitMs and an AbortSignal must win over an attempt stalled in Redis (CLIENT PAUSE),
// and a grant that arrives after the caller gave up must be released at once, not held for its lease.
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { fenceKey, LocksClosedError, LockTimeoutError, lockKey } from "../../src/index.js";
import { connect, makeLocks, uniq } from "../helpers.js";

let redis: Redis;
let admin: Redis;
beforeAll(async () => {
  redis = connect();
  admin = connect();
  await Promise.all([redis.ping(), admin.ping()]);
});
afterEach(async () => {
  // Waits out any pause still running (every command waits for it).
  await admin.ping();
});
afterAll(() => {
  redis.disconnect();
  admin.disconnect();
});

const PAUSE_MS = 1_500;

/** After the pause, the attempt ran in Redis (it took a token), and its grant was released again. */
async function expectGrantReleased(res: string) {
  await admin.ping();
  await vi.waitFor(
    async () => {
      expect(await admin.exists(fenceKey(res))).toBe(1);
      expect(await admin.exists(lockKey("lock:", res))).toBe(0);
    },
    { timeout: 2_000, interval: 20 },
  );
}

describe("an attempt stalled in Redis (defect 6)", () => {
  // Found by the simulation's 100 000-seed run: the "gave up at the deadline" path did not look at close().
  it("close() while the attempt is stalled: the acquire rejects with LocksClosedError, though waitMs runs out after", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("stock");
    await admin.call("client", "pause", String(PAUSE_MS), "ALL");
    const outcome = locks.acquire(res, { waitMs: 200 }).then(
      () => "acquired",
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 50));
    await locks.close();
    expect(await outcome).toBeInstanceOf(LocksClosedError);
    await expectGrantReleased(res);
  });

  it("acquire({ waitMs: 200 }) rejects near 200 ms, and the late grant is released", async () => {
    const { locks, events } = makeLocks(redis);
    const res = uniq("stock");
    await admin.call("client", "pause", String(PAUSE_MS), "ALL");
    const t0 = performance.now();
    const outcome = await locks.acquire(res, { waitMs: 200 }).then(
      (h) => ({ acquired: h.isHeld() }),
      (e: unknown) => e,
    );
    const took = performance.now() - t0;
    expect(outcome).toBeInstanceOf(LockTimeoutError);
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(1_000);
    await expectGrantReleased(res);
    expect(events.filter((e) => e.type === "acquired")).toEqual([]);
    await locks.close();
  });

  it("an abort at 100 ms is honoured during the pause, and the late grant is released", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("stock");
    await admin.call("client", "pause", String(PAUSE_MS), "ALL");
    const ac = new AbortController();
    const reason = new Error("caller gave up");
    setTimeout(() => ac.abort(reason), 100);
    const t0 = performance.now();
    const outcome = await locks.acquire(res, { waitMs: 10_000, signal: ac.signal }).then(
      (h) => ({ acquired: h.isHeld() }),
      (e: unknown) => e,
    );
    const took = performance.now() - t0;
    expect(outcome).toBe(reason);
    expect(took).toBeLessThan(1_000);
    await expectGrantReleased(res);
    await locks.close();
  });

  it("a waiter queued behind a holder also gives up at waitMs while its retry is stalled", async () => {
    const { locks } = makeLocks(redis, { retry: { maxMs: 50 } });
    const { locks: holderLocks } = makeLocks(admin);
    const res = uniq("stock");
    const holder = await holderLocks.acquire(res, { leaseMs: 10_000 });
    const t0 = performance.now();
    const waiting = locks.acquire(res, { waitMs: 400 }).then(
      (h) => ({ acquired: h.isHeld() }),
      (e: unknown) => e,
    );
    // The waiter's first attempt was refused; its next ones (every ~50 ms) stall in the pause.
    await new Promise((r) => setTimeout(r, 100));
    await admin.call("client", "pause", String(PAUSE_MS), "ALL");
    const outcome = await waiting;
    const took = performance.now() - t0;
    expect(outcome).toBeInstanceOf(LockTimeoutError);
    expect(took).toBeLessThan(1_200);
    await admin.ping();
    expect(await holder.release()).toBe("released");
    await locks.close();
    await holderLocks.close();
  });
});
