// Issue 12, defect 8: release messages must reach a waiter even when the subscriber cannot connect for a
// while. The subscriber is made from the caller's client, which (like the API's) may fail fast with
// maxRetriesPerRequest: 1; a SUBSCRIBE flushed while it could not connect was swallowed and never retried,
// and the resource's waiters fell back to polling. Faults are real: `CONFIG SET maxclients` refuses new
// connections, `CLIENT KILL TYPE pubsub` drops the subscriber.
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { releaseChannel } from "../../src/index.js";
import { connect, makeLocks, sleep, uniq } from "../helpers.js";

let admin: Redis;
let holderRedis: Redis;
let maxclients: string;
beforeAll(async () => {
  admin = connect();
  holderRedis = connect();
  await Promise.all([admin.ping(), holderRedis.ping()]);
  maxclients = ((await admin.config("GET", "maxclients")) as string[])[1]!;
});
afterEach(async () => {
  await admin.config("SET", "maxclients", maxclients);
});
afterAll(() => {
  admin.disconnect();
  holderRedis.disconnect();
});

async function clientCount(): Promise<number> {
  const list = (await admin.call("client", "list")) as string;
  return list.trim().split("\n").length;
}

/** No new connection is accepted; the ones open now stay. */
async function refuseNewConnections() {
  await admin.config("SET", "maxclients", String(await clientCount()));
}

async function subscribers(res: string): Promise<number> {
  const [, n] = (await admin.call("pubsub", "numsub", releaseChannel(res))) as [string, number];
  return Number(n);
}

/** A client like the API's: one retry per request. */
async function failFastClient(): Promise<Redis> {
  const r = new Redis(inject("redisUrl"), { maxRetriesPerRequest: 1 });
  r.on("error", () => {});
  await r.ping();
  return r;
}

describe("the subscriber of a fail-fast client (defect 8)", () => {
  it("a SUBSCRIBE that could not be sent at first is retried: the waiter is woken by the release message", async () => {
    const redis = await failFastClient();
    const { locks: holderLocks } = makeLocks(holderRedis);
    const { locks } = makeLocks(redis, { retry: { maxMs: 10_000 } });
    const res = uniq("acct");
    const held = await holderLocks.acquire(res);
    // The waiter's first attempt is refused; its subscriber is made now and cannot connect.
    await refuseNewConnections();
    const waiting = locks.acquire(res, { waitMs: 20_000 }).then((h) => ({ h, at: performance.now() }));
    // Long enough for several reconnect attempts (50, 100, 150… ms): past maxRetriesPerRequest.
    await sleep(1_000);
    expect(await subscribers(res)).toBe(0);
    await admin.config("SET", "maxclients", maxclients);
    // Once the subscriber can connect, the subscription must come through (ioredis backs off ≤ 2 s).
    await vi.waitFor(async () => expect(await subscribers(res)).toBe(1), { timeout: 5_000, interval: 50 });
    const releasedAt = performance.now();
    expect(await held.release()).toBe("released");
    const { h, at } = await waiting;
    expect(h.isHeld()).toBe(true);
    // Woken by the message, not by its fallback timer (retry.maxMs = 10 s).
    expect(at - releasedAt).toBeLessThan(2_000);
    await h.release();
    await locks.close();
    await holderLocks.close();
    redis.disconnect();
  });

  it("after the subscriber reconnects, a waiter looks again: a release published while it was away is not lost", async () => {
    const redis = await failFastClient();
    const { locks: holderLocks } = makeLocks(holderRedis);
    const { locks } = makeLocks(redis, { retry: { maxMs: 10_000 } });
    const res = uniq("acct");
    const held = await holderLocks.acquire(res);
    const waiting = locks.acquire(res, { waitMs: 20_000 }).then((h) => ({ h, at: performance.now() }));
    await vi.waitFor(async () => expect(await subscribers(res)).toBe(1), { timeout: 2_000, interval: 10 });
    // Drop the subscriber and keep it out while the holder releases: the message reaches nobody.
    await admin.config("SET", "maxclients", String((await clientCount()) - 1));
    await admin.call("client", "kill", "type", "pubsub");
    expect(await held.release()).toBe("released");
    await sleep(300);
    expect(await subscribers(res)).toBe(0);
    const backAt = performance.now();
    await admin.config("SET", "maxclients", maxclients);
    const { h, at } = await waiting;
    expect(h.isHeld()).toBe(true);
    // Not left to its fallback timer (retry.maxMs = 10 s): it looks once the subscriber is back (ioredis
    // backs off at most 2 s between reconnects).
    expect(at - backAt).toBeLessThan(3_500);
    await h.release();
    await locks.close();
    await holderLocks.close();
    redis.disconnect();
  });
});
