// Issue 12, defect 9: close() racing attempts in flight. Whatever the interleaving, an acquire that did not
// return a handle before close() ends in LocksClosedError, leaves no lock held in Redis and opens no
// connection (a leaked subscriber would keep the process alive).
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { startReplyCutter } from "../../../../scripts/lib/reply-cutter.mjs";
import { type LockHandle, LocksClosedError, lockKey, type ReadsFn } from "../../src/index.js";
import { connect, makeLocks, sleep, uniq, untilListening } from "../helpers.js";

let redis: Redis;
let admin: Redis;
beforeAll(async () => {
  redis = connect();
  admin = connect();
  await Promise.all([redis.ping(), admin.ping()]);
});
afterAll(() => {
  redis.disconnect();
  admin.disconnect();
});

async function clientCount(): Promise<number> {
  const list = (await admin.call("client", "list")) as string;
  return list.trim().split("\n").length;
}

describe("close() while attempts are in flight (defect 9)", () => {
  it("a first attempt refused after close() rejects with LocksClosedError, not LockTimeoutError", async () => {
    const { locks: holderLocks } = makeLocks(admin);
    const { locks } = makeLocks(redis);
    const res = uniq("acct");
    const held = await holderLocks.acquire(res);
    const before = await clientCount();
    const p = locks.acquire(res).catch((e: unknown) => e);
    await locks.close();
    expect(await p).toBeInstanceOf(LocksClosedError);
    await sleep(200);
    expect(await clientCount()).toBe(before);
    await held.release();
    await holderLocks.close();
  });

  it("an attempt granted after close() rejects with LocksClosedError and its lock is released", async () => {
    const { locks, events } = makeLocks(redis);
    const res = uniq("acct");
    const p = locks.acquire(res).then(
      (h: LockHandle) => ({ handle: h.owner }),
      (e: unknown) => e,
    );
    await locks.close();
    expect(await p).toBeInstanceOf(LocksClosedError);
    await vi.waitFor(async () => expect(await admin.exists(lockKey("lock:", res))).toBe(0), {
      timeout: 1_000,
      interval: 10,
    });
    expect(events.filter((e) => e.type === "acquired")).toEqual([]);
  });

  it("a queued waiter whose attempt is refused after close() opens no subscriber and rejects with LocksClosedError", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("acct");
    const before = await clientCount();
    // `reads` runs as the attempt is sent: it is the hook that closes the Locks while B's attempt is in flight.
    const closeNow = (() => {
      void locks.close();
      return Promise.resolve(null);
    }) as ReadsFn;
    // A takes the lock on the fast path; B, called in the same tick, queues behind A's attempt and is told
    // to try once A's answer is in. B's attempt is refused (A holds), after close().
    const a = locks.acquire(res);
    const b = locks.acquire(res, { reads: closeNow }).then(
      (h) => ({ handle: h.owner }),
      (e: unknown) => e,
    );
    const ha = await a;
    expect(ha.isHeld()).toBe(true);
    expect(await b).toBeInstanceOf(LocksClosedError);
    // A leaked subscriber would connect within a few ms.
    await sleep(300);
    expect(await clientCount()).toBe(before);
    // A's lock lives out its lease (the Locks is closed); clean up for the other tests.
    await admin.del(ha.key);
  });
});

// A store that stopped answering (stalled, or a link dead without a reset) while an attempt was in flight, on a
// client without a command timeout (ioredis's default): close() left the acquire waiting for its deadline, and
// forever for a tryAcquire, which has none.
describe("close() while an attempt waits on a store that stopped answering", () => {
  /** Far beyond an answer: not reached unless the call waits for the store. */
  const HUNG_AFTER_MS = 5_000;

  it.each([
    ["acquire (waitMs 20 s)", false],
    ["tryAcquire (no deadline)", true],
  ] as const)(
    "%s rejects with LocksClosedError when close() runs, without waiting for the store",
    async (_, once) => {
      const cutter = await startReplyCutter(inject("redisUrl"));
      const client = new Redis(cutter.url);
      client.on("error", () => {});
      const { locks } = makeLocks(client);
      try {
        await client.ping();
        cutter.holdReplies();
        const call = (
          once ? locks.tryAcquire(uniq("stalled")) : locks.acquire(uniq("stalled"), { waitMs: 20_000 })
        )
          .then(() => "settled")
          .catch((e: unknown) => e);
        await sleep(100); // the attempt is in flight, its answer held
        void locks.close();
        expect(await Promise.race([call, sleep(HUNG_AFTER_MS).then(() => "hung")])).toBeInstanceOf(
          LocksClosedError,
        );
      } finally {
        client.disconnect();
        await cutter.close();
      }
    },
  );
});

// A release called before close() and not awaited is still in this process when close() runs: a tick's calls
// go out together at the end of the tick (redis/tick-batch.ts), and a release that grants the next waiter of
// its process early goes out on the next turn of the event loop, after the new holder's first commands
// (handle.ts). A client quit as soon as close() returns refused it, and the lock stayed with a hold that had
// ended until its lease ran out.
describe("close() right after a release that was not awaited", () => {
  it.each([
    ["that freed the lock", false],
    ["that granted the next waiter of this process early", true],
  ] as const)("sends a release %s before close() returns", async (_, withWaiter) => {
    const client = connect();
    await client.ping();
    const { locks } = makeLocks(client);
    const res = uniq("acct");
    const first = await locks.acquire(res);
    const next = withWaiter ? locks.acquire(res).catch((e: unknown) => e) : undefined;
    if (withWaiter) await untilListening(locks, res);
    const released = first.release().catch((e: unknown) => e);
    await locks.close();
    void client.quit();
    expect(await released).toBe("released");
    // Granted early, it had not returned before close(): it ends as every such acquire does.
    if (next) expect(await next).toBeInstanceOf(LocksClosedError);
    else expect(await admin.exists(lockKey("lock:", res))).toBe(0);
  });
});
