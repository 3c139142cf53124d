import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LockLostError, type Locks } from "../../src/index.js";
import { connect, makeLocks, uniq, within } from "../helpers.js";

let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

/** The process stalls (a long GC, a blocking call, SIGSTOP): nothing of ours runs meanwhile. */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {}
}

/**
 * An acquire whose process stalls past the lease while its attempt is in flight: the attempt's reads are
 * called as it is sent, so the stall sits between sending and reading the answer. Settles with "handed out"
 * or the error.
 */
function acquireStallingInReads(locks: Locks, resource: string): Promise<unknown> {
  return locks
    .acquire(resource, {
      reads: (r) => {
        stall(500);
        return r.ping();
      },
    })
    .then(
      () => "handed out",
      (e: unknown) => e,
    );
}

describe("a holder that cannot run past its lease", () => {
  it("a caller's timer that fell due first already reads the signal aborted and isHeld() false", async () => {
    const { locks } = makeLocks(redis, { leaseMs: 300 });
    const h = await locks.acquire(uniq("paused"));
    const signal = h.signal;
    // Due at 40 ms, before the watchdog's first tick (lease/3): after the stall Node runs it first.
    const look = new Promise<[boolean, boolean, unknown]>((resolve) =>
      setTimeout(() => resolve([h.signal.aborted, h.isHeld(), h.signal.reason]), 40),
    );
    setTimeout(() => stall(500), 10);
    const [aborted, held, reason] = await look;
    expect([aborted, held]).toEqual([true, false]);
    expect(signal.aborted).toBe(true);
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe("deadline");
    await h.release().catch(() => {});
    await locks.close();
  });

  it("a grant answered after its lease could have ended is not handed out: acquire rejects with LockLostError", async () => {
    const { locks, events } = makeLocks(redis, { leaseMs: 300 });
    const resource = uniq("late-grant");
    const acquiring = acquireStallingInReads(locks, resource);
    const outcome = await acquiring;
    expect(outcome).toBeInstanceOf(LockLostError);
    expect(events.map((e) => e.type)).toContain("lost");
    // Nothing of it is left holding the lock.
    const other = makeLocks(redis, { leaseMs: 5_000 }).locks;
    await other.acquire(resource, { waitMs: 2_000 });
    await other.close();
    await locks.close();
  });
  it("a grant refused as too late leaves the lock to the waiter of the same process behind it: no hang, its hold named in Redis", async () => {
    const { locks } = makeLocks(redis, { leaseMs: 300 });
    const resource = uniq("late-grant-next");
    const holds: [number, number][] = [];
    const late = acquireStallingInReads(locks, resource);
    // Queued behind it in this process: the refused grant's release hands the lock on, or its lease ran out.
    const next = locks.withLock(
      resource,
      async (h) => {
        const start = performance.now();
        expect(h.isHeld()).toBe(true);
        expect(await redis.hget(h.key, h.owner)).toBe("1");
        await new Promise((r) => setTimeout(r, 20));
        holds.push([start, performance.now()]);
        return h.token;
      },
      { waitMs: 3_000 },
    );
    expect(await late).toBeInstanceOf(LockLostError);
    const token = await next;
    expect(typeof token).toBe("number");
    expect(holds).toHaveLength(1);
    await locks.close();
  });
});

describe("close() while a lock is held", () => {
  it.each([
    ["watchdog", undefined, "deadline"],
    ["fixed lease", 300, "expired"],
  ] as const)("(%s): the signal still aborts once the lock may be another's", async (_, leaseMs, reason) => {
    const { locks } = makeLocks(redis, { leaseMs: 300 });
    const h = await locks.acquire(uniq("closed"), leaseMs ? { leaseMs } : {});
    const lost = new Promise<unknown>((resolve) =>
      h.signal.addEventListener("abort", () => resolve(h.signal.reason), { once: true }),
    );
    await locks.close();
    expect(h.isHeld()).toBe(true);
    // close() does not release it and renews it no more: it is lost at its local deadline (< 300 ms).
    const reasonSeen = await within(lost, 1_000);
    expect(reasonSeen).toBeInstanceOf(LockLostError);
    expect((reasonSeen as LockLostError).reason).toBe(reason);
    expect(h.isHeld()).toBe(false);
  });
});
