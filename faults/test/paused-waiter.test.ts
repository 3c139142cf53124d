// Scenario 4b: a waiter in another process is paused (SIGSTOP) just as the lock is handed to it. Its claim
// runs out unheard, a third process takes the lock, and then the paused waiter wakes up with the handoff
// message still in its socket. That message is true but stale: the waiter must not hold beside the new
// holder (packages/lock/src/core/by-message.ts), and must get the lock properly once it is free.
import { setTimeout as sleep } from "node:timers/promises";
import { createLocks, type Locks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Holder } from "../src/child.js";
import { assertNoTwoHolders, figure } from "../src/figures.js";
import { recorded } from "../src/recorder.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";

const LEASE_MS = 400;
/** The claim the releasing process gives a handed lock (its retry.queueLeaseMs), and the new holder's re-check. */
const CLAIM_MS = 300;
const RUNS = 3;
let server: RedisServer;
let admin: Redis;

beforeAll(async () => {
  server = await startRedis();
  admin = new Redis(server.url);
});
afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
});

const quick = { retry: { queueLeaseMs: CLAIM_MS } };

it(`a waiter paused as the lock is handed to it never holds beside the next holder (${RUNS} runs)`, async () => {
  const woke: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const resource = `paused:${run}`;
    const key = `lock:{${resource}}`;
    const a = recorded(new Redis(server.url), `releaser-${run}`);
    const c = recorded(new Redis(server.url), `next-${run}`);
    const releaser: Locks = createLocks({
      redis: a.redis,
      leaseMs: LEASE_MS,
      instanceId: `releaser-${run}`,
      ...quick,
    });
    const next: Locks = createLocks({
      redis: c.redis,
      leaseMs: LEASE_MS,
      instanceId: `next-${run}`,
      ...quick,
    });
    const paused = await Holder.start(`paused-${run}`, { redisUrl: server.url, leaseMs: LEASE_MS });
    try {
      const fenceBefore = Number((await admin.get(`fence:{${resource}}`)) ?? 0);
      const held = await releaser.acquire(resource);
      let pausedGot: { token: number } | undefined;
      const pausedAcquire = paused.call("acquire", { resource, opts: {} }).then((r) => {
        pausedGot = r as unknown as { token: number };
      });
      // Queued in Redis and listening for the handoff: then it stops.
      const channel = `lock-released:{${resource}}`;
      while (
        (await admin.llen(`queue:{${resource}}`)) === 0 ||
        ((await admin.pubsub("NUMSUB", channel)) as [string, number])[1] === 0
      )
        await sleep(5);
      paused.signal("SIGSTOP");
      await held.release();
      // The lock is now claimed for the paused waiter (a fresh token, announced to it alone); the claim runs out
      // unheard and the next process takes it.
      const claimToken = Number(await admin.get(`fence:{${resource}}`));
      expect(claimToken).toBeGreaterThan(held.token!);
      expect(await admin.hexists(key, "~handed")).toBe(1);
      const mine = await next.acquire(resource, { waitMs: 5_000 });
      expect(mine.token).toBeGreaterThan(claimToken);
      const wokeAt = performance.now();
      paused.signal("SIGCONT");
      // Woken with the stale message in its socket: it must not take the lock while the next holder has it.
      await sleep(3 * CLAIM_MS);
      expect(pausedGot).toBeUndefined();
      expect(Object.keys(await admin.hgetall(key)).filter((f) => !f.startsWith("~"))).toEqual([mine.owner]);
      expect(mine.isHeld()).toBe(true);
      woke.push(performance.now() - wokeAt);
      // Once it is free, the paused waiter gets it properly, with a greater token.
      expect(await mine.release()).toBe("released");
      await pausedAcquire;
      expect(pausedGot!.token).toBeGreaterThan(mine.token!);
      await paused.call("release");
      const fenceAfter = Number(await admin.get(`fence:{${resource}}`));
      assertNoTwoHolders(`paused waiter ${run}`, [a.source(), c.source(), paused.source()], {
        [key]: { before: fenceBefore, after: fenceAfter },
      });
    } finally {
      await paused.stop();
      await Promise.all([releaser.close(), next.close()]);
      a.redis.disconnect();
      c.redis.disconnect();
    }
  }
  figure(
    `paused waiter (SIGSTOP as the lock was handed to it, claim ${CLAIM_MS} ms): ${RUNS}/${RUNS} runs woke beside the next holder and took nothing until it released`,
  );
});
