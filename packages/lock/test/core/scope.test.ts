// Issue 12, defect 1: the re-entry scope (AsyncLocalStorage) follows work started inside withLock but run
// after it returned. Such work must acquire afresh, as an outsider, not "re-enter" a lock nobody holds.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LockHandle } from "../../src/index.js";
import { assertNoOverlap, connect, type Hold, makeLocks, sleep, uniq } from "../helpers.js";

let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

/** A job that holds the lock for `ms` and records when, under its own label. */
function job(holds: Hold[], label: string, ms = 100) {
  return async (lock: LockHandle) => {
    const start = performance.now();
    await sleep(ms);
    if (!lock.isHeld()) throw new Error(`${label}: lock not held at the end of its job`);
    holds.push({ owner: label, start, end: performance.now() });
  };
}

describe("re-entry joins only a still-held enclosing withLock (defect 1)", () => {
  it("two withLock calls from a timer set inside withLock, run after it returned, never overlap", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("acct");
    const holds: Hold[] = [];
    let detached: Promise<unknown> | undefined;
    await locks.withLock(res, async () => {
      // Started inside the scope, runs 30 ms after the outer withLock released.
      detached = new Promise((resolve, reject) => {
        setTimeout(() => {
          Promise.all([locks.withLock(res, job(holds, "a")), locks.withLock(res, job(holds, "b"))]).then(
            resolve,
            reject,
          );
        }, 30);
      });
    });
    await detached;
    expect(holds).toHaveLength(2);
    assertNoOverlap(holds);
    await locks.close();
  });

  it("documented choice: concurrent children of a live withLock re-enter and run together", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("acct");
    const counts: number[] = [];
    const owners = new Set<string>();
    await locks.withLock(res, async (outer) => {
      owners.add(outer.owner);
      await Promise.all(
        [1, 2].map(() =>
          locks.withLock(res, async (inner) => {
            owners.add(inner.owner);
            counts.push(inner.count);
            await sleep(30);
          }),
        ),
      );
    });
    expect(owners.size).toBe(1);
    expect(counts.sort()).toEqual([2, 3]);
    expect(await redis.exists(`lock:{${res}}`)).toBe(0);
    await locks.close();
  });
});
