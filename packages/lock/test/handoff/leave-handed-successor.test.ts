// A waiter that gives up names its process's next waiter to take its place in the store's queue. When the lock had
// just been handed to that next waiter (dropping it from the queue, its message still on the way), the leave put it
// back in the queue behind its own grant: once it passed the lock on (or released it), the lock was handed to it
// again, and held by nobody until the entry's lease ran out. Found by a black-box probe (two Locks, acquires aborted
// at random: ~4 runs in 150); diagnosed from MONITOR. Both Locks share one connection here, so the release and the
// leaves reach Redis in the order sent, as they did in the failing runs.
import { describe, expect, it } from "vitest";
import { makeLocks, sleep, twoConnectionsForFile, uniq } from "../helpers.js";

const QUEUE_LEASE_MS = 6_000;
// `redis` carries both Locks (so the release and the leaves reach Redis in the order sent); `other` watches.
const conns = twoConnectionsForFile();

/** Resolves true once the lock's key is gone, false if it is still there after `ms`. */
async function freedWithin(key: string, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    if ((await conns.other.exists(key)) === 0) return true;
    await sleep(10);
  }
  return false;
}

describe("a leave naming a successor the lock was just handed to", () => {
  for (const ending of [
    "the successor gives up too",
    "the successor takes the lock and releases it",
  ] as const) {
    it(`does not queue it again: ${ending}, and the lock is free long before an entry's lease`, async () => {
      const retry = { queueLeaseMs: QUEUE_LEASE_MS };
      const { locks: a } = makeLocks(conns.redis, { leaseMs: 5_000, instanceId: "proc-a", retry });
      const { locks: b } = makeLocks(conns.redis, { leaseMs: 5_000, instanceId: "proc-b", retry });
      for (let run = 0; run < 3; run++) {
        const resource = uniq("leave-handed");
        const held = await b.acquire(resource);
        const [ac1, ac2, ac3] = [new AbortController(), new AbortController(), new AbortController()];
        const first = a.acquire(resource, { signal: ac1.signal, waitMs: 4_000 }).then(
          async (h) => {
            await sleep(5);
            await h.release();
          },
          () => {},
        );
        const third = a.acquire(resource, { signal: ac3.signal, waitMs: 4_000 }).catch(() => {});
        const second = a.acquire(resource, { signal: ac2.signal, waitMs: 4_000 }).then(
          (h) => h.release(),
          () => {},
        );
        // The third leaves the local line at once: the second becomes its head and queues in the store too.
        ac3.abort(new Error("third"));
        await sleep(20);
        // The release hands the lock to the first waiter's entry; the second's leave, sent right after it, names
        // the first as its successor before this process can have heard the handoff.
        await new Promise<void>((resolve) =>
          setTimeout(() => {
            void held.release();
            process.nextTick(() => {
              ac2.abort(new Error("second"));
              if (ending === "the successor gives up too") ac1.abort(new Error("first"));
              resolve();
            });
          }, 0),
        );
        await Promise.all([first, second, third]);
        // Stuck, it stays held for the queue entry's lease (6 s); free, it goes within a few round trips.
        expect(await freedWithin(`lock:{${resource}}`, 2_000), `run ${run}`).toBe(true);
      }
      await a.close();
      await b.close();
    });
  }
});
