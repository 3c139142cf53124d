import type { Redis } from "ioredis";
import { expect } from "vitest";
import type { LockHandle, RedisLocks } from "../../src/index.js";
import { sleep, uniq } from "../helpers.js";

export const queueOf = (name: string) => `lock:semaphore:queue:{${name}}`;
export const leasesOf = (name: string) => `lock:semaphore:queue-leases:{${name}}`;

/**
 * A one-permit semaphore held by `holder`; process a queues a1 (abortable) and, behind it inside a, a2; process b
 * queues b1 after a. `aEntry`/`bEntry` are the two entries of Redis's queue, in that order.
 */
export async function twoProcessesQueued(redis: Redis, holder: RedisLocks, a: RedisLocks, b: RedisLocks) {
  const name = uniq("place");
  const held = await holder.semaphore(name, 1).acquire();
  const gaveUp = new AbortController();
  const a1 = a.semaphore(name, 1).acquire({ waitMs: 10_000, signal: gaveUp.signal });
  while ((await redis.llen(queueOf(name))) < 1) await sleep(5);
  const a2 = a.semaphore(name, 1).acquire({ waitMs: 10_000 });
  const b1 = b.semaphore(name, 1).acquire({ waitMs: 10_000 });
  while ((await redis.llen(queueOf(name))) < 2) await sleep(5);
  const [aEntry, bEntry] = await redis.lrange(queueOf(name), 0, -1);
  return { name, held, gaveUp, a1, a2, b1, aEntry: aEntry!, bEntry: bEntry! };
}

/** Redis's queue reads [a's successor, b1]: a2 took a1's place, ahead of b. */
export async function successorFirst(
  redis: Redis,
  name: string,
  aEntry: string,
  bEntry: string,
): Promise<void> {
  await expect
    .poll(async () => {
      const q = await redis.lrange(queueOf(name), 0, -1);
      return q.length === 2 && q[0] !== aEntry && q[1] === bEntry;
    })
    .toBe(true);
}

/** The holder releases: `first` gets the permit before `second`, then `second` once `first` releases. */
export async function grantedInOrder(
  held: LockHandle,
  first: Promise<LockHandle>,
  second: Promise<LockHandle>,
): Promise<void> {
  const order: string[] = [];
  const took = (who: string) => (h: LockHandle) => {
    order.push(who);
    return h;
  };
  const firstHeld = first.then(took("first"));
  const secondHeld = second.then(took("second"));
  await held.release();
  const h1 = await firstHeld;
  await sleep(50);
  expect(order).toEqual(["first"]);
  await h1.release();
  const h2 = await secondHeld;
  expect(order).toEqual(["first", "second"]);
  await h2.release();
}
