// Issue 13, the local streak: a release may grant the lock to a waiter of its own process (no message, no
// wake-up) while another process queues, for `localStreak` grants in a row and then only while that process's
// entry has queued for less than its time slice: `localStreakMs` shared by the processes that queue (Redis time,
// from when the entry joined). Each Locks below has
// a connection of its own, as a separate process would.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocksOptions } from "../../src/index.js";
import { queueKeyOf } from "../../src/resource.js";
import { connect, makeLocks, sleep, uniq } from "../helpers.js";

let redis: Redis;
const extra: Redis[] = [];
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
  for (const r of extra) r.disconnect();
});

function process_(instanceId: string, opts: Partial<LocksOptions> = {}) {
  const conn = connect();
  extra.push(conn);
  return makeLocks(conn, { instanceId, ...opts }).locks;
}

const queueLength = (resource: string) => redis.llen(queueKeyOf(`lock:{${resource}}`));

/** `n` waiters of `locks` that each hold the lock `holdMs`, recording their turn in `order`. */
function holders(
  locks: ReturnType<typeof process_>,
  resource: string,
  n: number,
  holdMs: number,
  order: string[],
  label: string,
) {
  return Array.from({ length: n }, () =>
    locks.withLock(
      resource,
      async () => {
        order.push(label);
        await sleep(holdMs);
      },
      { waitMs: 10_000 },
    ),
  );
}

/** A holds the lock with its `n` waiters queued behind (its head's entry in the Redis queue). */
async function aHoldsWithWaiters(
  a: ReturnType<typeof process_>,
  resource: string,
  n: number,
  holdMs: number,
) {
  const order: string[] = [];
  const first = await a.acquire(resource);
  const done = holders(a, resource, n, holdMs, order, "a");
  await expect.poll(() => queueLength(resource)).toBe(1);
  return { first, done, order };
}

describe("the local streak", () => {
  it("goes on past localStreak while the other process has queued for less than localStreakMs", async () => {
    const resource = uniq("streak-keep");
    const a = process_("streak-a", { localStreak: 0, localStreakMs: 60_000 });
    const b = process_("streak-b");
    const { first, done, order } = await aHoldsWithWaiters(a, resource, 5, 1);
    const bDone = b.withLock(resource, () => void order.push("b"), { waitMs: 10_000 });
    await expect.poll(() => queueLength(resource)).toBe(2);
    await first.release();
    await Promise.all([...done, bDone]);
    // With the count alone (localStreak 0) the lock would go to b right after a's first waiter.
    expect(order).toEqual(["a", "a", "a", "a", "a", "b"]);
    await a.close();
    await b.close();
  });

  it("ends once the other process's entry has queued localStreakMs, however often it refreshes its entry", async () => {
    const resource = uniq("streak-end");
    const a = process_("streak-a2", { localStreak: 0, localStreakMs: 150 });
    // b's entry is refreshed every 20 ms: the time it queued must count from when it joined, not its last look.
    const b = process_("streak-b2", { retry: { maxMs: 20, jitterMs: 0, queueLeaseMs: 60 } });
    const { first, done, order } = await aHoldsWithWaiters(a, resource, 60, 10);
    const bDone = b.withLock(resource, () => void order.push("b"), { waitMs: 10_000 });
    await expect.poll(() => queueLength(resource)).toBe(2);
    await first.release();
    await Promise.all([...done, bDone]);
    const aAfterB = order.length - 1 - order.indexOf("b");
    // b got its turn after about 150 ms of a's 10 ms holds, long before a's 60 waiters ran out.
    expect(aAfterB).toBeGreaterThanOrEqual(20);
    expect(order.indexOf("b")).toBeGreaterThanOrEqual(3);
    await a.close();
    await b.close();
  });

  it("shares localStreakMs among the processes that queue: with three queued, a turn lasts about a third of it", async () => {
    const resource = uniq("streak-slice");
    const a = process_("streak-a4", { localStreak: 0, localStreakMs: 600 });
    const others = ["streak-b4", "streak-c4", "streak-d4"].map((id) => process_(id));
    const { first, done, order } = await aHoldsWithWaiters(a, resource, 100, 10);
    const grantedAfter: number[] = [];
    const joined: number[] = [];
    const othersDone: Promise<void>[] = [];
    for (const [i, locks] of others.entries()) {
      joined.push(performance.now());
      othersDone.push(
        locks.withLock(
          resource,
          () => {
            grantedAfter[i] = performance.now() - joined[i]!;
            order.push(`other${i}`);
          },
          { waitMs: 10_000 },
        ),
      );
      await expect.poll(() => queueLength(resource)).toBe(i + 2);
    }
    await first.release();
    await Promise.all([...done, ...othersDone]);
    // a's streak ends once the first of them has queued 600 / 3 ms (not the whole 600 ms, as when each process's
    // streak ran until the first other entry had queued localStreakMs); then the three take their turns.
    expect(grantedAfter[0]).toBeGreaterThanOrEqual(150);
    expect(grantedAfter[0]).toBeLessThan(450);
    expect(order.slice(order.indexOf("other0"), order.indexOf("other0") + 3)).toEqual([
      "other0",
      "other1",
      "other2",
    ]);
    await a.close();
    for (const locks of others) await locks.close();
  });

  it("counts a waiter that takes the place of one that gave up as queued since that one joined", async () => {
    const resource = uniq("streak-leave");
    const a = process_("streak-a3", { localStreak: 0, localStreakMs: 600 });
    const b = process_("streak-b3");
    const { first, done, order } = await aHoldsWithWaiters(a, resource, 120, 10);
    const gaveUp = b.acquire(resource, { waitMs: 300 }).then(
      () => "acquired",
      (e: Error) => e.name,
    );
    await expect.poll(() => queueLength(resource)).toBe(2);
    const joinedAt = performance.now();
    let grantedAfter = -1;
    const next = b.withLock(
      resource,
      () => {
        grantedAfter = performance.now() - joinedAt;
        order.push("b");
      },
      { waitMs: 10_000 },
    );
    await first.release();
    expect(await gaveUp).toBe("LockTimeoutError");
    await Promise.all([...done, next]);
    // The successor inherits the leaver's place and its time in line: its turn comes ~600 ms after the leaver
    // joined (not at once, as for an entry with no join time; not 600 ms after it took over, at ~900 ms).
    expect(grantedAfter).toBeGreaterThanOrEqual(500);
    expect(grantedAfter).toBeLessThan(850);
    await a.close();
    await b.close();
  });
});
