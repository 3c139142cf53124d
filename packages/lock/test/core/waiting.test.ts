import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLocks, LockTimeoutError } from "../../src/index.js";
import { assertNoOverlap, commandStats, connect, type Hold, makeLocks, sleep, uniq } from "../helpers.js";

let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

const scriptCalls = (s: Record<string, number>) => (s.evalsha ?? 0) + (s.eval ?? 0) + (s.fcall ?? 0);

async function contend(instances: number, tasks: number) {
  const resource = uniq("contended");
  const conns = Array.from({ length: instances }, () => connect());
  const made = conns.map((c) => makeLocks(c));
  // Load the scripts first so NOSCRIPT retries do not count.
  for (const { locks } of made) await (await locks.acquire(uniq("warm"))).release();
  const before = await commandStats(redis);
  const holds: Hold[] = [];
  await Promise.all(
    Array.from({ length: tasks }, (_, i) =>
      made[i % instances]!.locks.withLock(
        resource,
        async (h) => {
          const start = performance.now();
          const v = Number(await redis.get(`${resource}:counter`));
          await sleep(1);
          await redis.set(`${resource}:counter`, v + 1);
          holds.push({ owner: h.owner, start, end: performance.now() });
        },
        { waitMs: 30_000 },
      ),
    ),
  );
  const after = await commandStats(redis);
  const events = made.flatMap((m) => m.events).filter((e) => e.resource === resource);
  await Promise.all(made.map((m) => m.locks.close()));
  for (const c of conns) c.disconnect();
  const acquired = events.flatMap((e) => (e.type === "acquired" ? [e] : []));
  const attempts = acquired.reduce((n, e) => n + e.attempts, 0);
  return {
    holds,
    acquired,
    attempts,
    scripts: scriptCalls(after) - scriptCalls(before),
    publishes: (after.publish ?? 0) - (before.publish ?? 0),
    counter: Number(await redis.get(`${resource}:counter`)),
  };
}

describe("wake on release", () => {
  it("200 acquirers on one key: no overlap, at most 4 acquire attempts per success (events and commandstats)", async () => {
    const r = await contend(1, 200);
    assertNoOverlap(r.holds);
    expect(r.counter).toBe(200);
    expect(r.acquired).toHaveLength(200);
    // Every script call is an acquire attempt or one of the 200 releases: the two counts must agree.
    expect(r.scripts).toBe(r.attempts + 200);
    console.log(`1 instance: ${(r.attempts / 200).toFixed(2)} attempts/success, ${r.publishes} publishes`);
    expect(r.attempts / 200).toBeLessThanOrEqual(4);
  });

  it("200 acquirers spread over 4 Locks instances (4 connections) stay within 4 attempts per success", async () => {
    const r = await contend(4, 200);
    assertNoOverlap(r.holds);
    expect(r.counter).toBe(200);
    expect(r.scripts).toBe(r.attempts + 200);
    console.log(`4 instances: ${(r.attempts / 200).toFixed(2)} attempts/success, ${r.publishes} publishes`);
    expect(r.attempts / 200).toBeLessThanOrEqual(4);
  });

  it("an uncontended acquire+release is 2 script calls and publishes nothing; a contended release publishes", async () => {
    const { locks } = makeLocks(redis);
    await (await locks.acquire(uniq("warm"))).release();
    const before = await commandStats(redis);
    for (let i = 0; i < 20; i++) await (await locks.acquire(uniq("solo"))).release();
    const mid = await commandStats(redis);
    expect((mid.publish ?? 0) - (before.publish ?? 0)).toBe(0);
    expect(scriptCalls(mid) - scriptCalls(before)).toBe(40);
    // Two round trips per pair: count what the client sends (a pass-through spy on a dedicated connection).
    const own = connect();
    const sent: string[] = [];
    const send = own.sendCommand.bind(own);
    own.sendCommand = ((cmd: { name: string }, ...rest: unknown[]) => {
      sent.push(cmd.name);
      return (send as (...a: unknown[]) => unknown)(cmd, ...rest);
    }) as typeof own.sendCommand;
    const counted = createLocks({ redis: own });
    await (await counted.acquire(uniq("warm"))).release();
    sent.length = 0;
    for (let i = 0; i < 20; i++) await (await counted.acquire(uniq("solo"))).release();
    expect(sent).toEqual(Array(40).fill("evalsha"));
    await counted.close();
    own.disconnect();
    const resource = uniq("pair");
    const h = await locks.acquire(resource);
    const waiting = locks.acquire(resource);
    await sleep(50);
    await h.release();
    await (await waiting).release();
    const after = await commandStats(redis);
    expect((after.publish ?? 0) - (mid.publish ?? 0)).toBe(1);
    await locks.close();
  });

  it("a waiter wakes on the release message, long before its fallback timer", async () => {
    const { locks } = makeLocks(redis, { retry: { maxMs: 10_000 } });
    const other = createLocks({ redis });
    const resource = uniq("wake");
    const h = await other.acquire(resource);
    const waiter = locks.acquire(resource, { waitMs: 8_000 });
    await sleep(100);
    const releasedAt = performance.now();
    await h.release();
    const h2 = await waiter;
    // The fallback would sleep 10 s (min(pttl 30 s, maxMs 10 s)); the release message wakes it.
    expect(performance.now() - releasedAt).toBeLessThan(2_000);
    // Nobody of ours waits any more: the subscription goes (UNSUBSCRIBE is sent without waiting for it).
    await vi.waitFor(
      async () =>
        expect(await redis.call("pubsub", "numsub", `lock-released:{${resource}}`)).toEqual([
          `lock-released:{${resource}}`,
          0,
        ]),
      { timeout: 2_000, interval: 20 },
    );
    await h2.release();
    await Promise.all([locks.close(), other.close()]);
  });

  it("one shared subscriber connection, made on first contention, with one subscription per resource", async () => {
    const { locks } = makeLocks(redis, { instanceId: "subs-test" });
    const subscribers = async () =>
      ((await redis.client("LIST")) as string)
        .split("\n")
        .map((line) => Number(/ sub=(\d+)/.exec(line)?.[1] ?? 0))
        .filter((n) => n > 0);
    const resources = [uniq("subs"), uniq("subs"), uniq("subs")];
    const held = await Promise.all(resources.map((r) => locks.acquire(r)));
    expect(await subscribers()).toEqual([]);
    const waiters = resources.flatMap((r) =>
      Array.from({ length: 10 }, () => locks.acquire(r, { waitMs: 5_000 })),
    );
    await sleep(100);
    // Per resource, in one SUBSCRIBE: its release channel and this process's handoff channel.
    expect(await subscribers()).toEqual([6]);
    for (const r of resources) {
      const ch = `lock-released:{${r}}`;
      const counts = (await redis.call("pubsub", "numsub", ch, `${ch}:subs-test`)) as (string | number)[];
      expect(counts).toEqual([ch, 1, `${ch}:subs-test`, 1]);
    }
    await Promise.all(held.map((h) => h.release()));
    for (const w of waiters) await (await w).release();
    await sleep(50);
    // Nobody waits any more: every channel is unsubscribed.
    expect(await subscribers()).toEqual([]);
    await locks.close();
  });

  it("a waiter gets a crashed holder's lock after its lease, with no release message", async () => {
    const { locks } = makeLocks(redis);
    const resource = uniq("crash");
    await redis.hset(`lock:{${resource}}`, "crashed:owner", 1);
    await redis.pexpire(`lock:{${resource}}`, 300);
    const start = performance.now();
    const h = await locks.acquire(resource, { waitMs: 3_000 });
    expect(performance.now() - start).toBeGreaterThanOrEqual(250);
    expect(await redis.hget(h.key, h.owner)).toBe("1");
    await h.release();
    await locks.close();
  });

  it("waitMs bounds the wait: LockTimeoutError and a timeout event", async () => {
    const { locks, events } = makeLocks(redis);
    const resource = uniq("timeout");
    const h = await locks.acquire(resource);
    const start = performance.now();
    const err = await locks.acquire(resource, { waitMs: 300 }).catch((e) => e);
    const waited = performance.now() - start;
    expect(err).toBeInstanceOf(LockTimeoutError);
    expect(err.name).toBe("LockTimeoutError");
    expect(waited).toBeGreaterThanOrEqual(295);
    expect(waited).toBeLessThan(1_300);
    expect(events.find((e) => e.type === "timeout")).toMatchObject({
      resource,
      attempts: expect.any(Number),
    });
    expect(events.find((e) => e.type === "contended")).toMatchObject({ resource });
    expect(await locks.tryAcquire(resource)).toBeNull();
    await h.release();
    await locks.close();
  });

  it("an AbortSignal cancels the wait, and the queue moves on", async () => {
    const { locks } = makeLocks(redis);
    const resource = uniq("abort");
    const h = await locks.acquire(resource);
    const ac = new AbortController();
    const first = locks.acquire(resource, { signal: ac.signal, waitMs: 5_000 });
    const second = locks.acquire(resource, { waitMs: 5_000 });
    setTimeout(() => ac.abort(new Error("changed my mind")), 100).unref();
    await expect(first).rejects.toThrow("changed my mind");
    await h.release();
    const h2 = await second;
    expect(h2.isHeld()).toBe(true);
    await h2.release();
    const aborted = AbortSignal.abort(new Error("already"));
    await expect(locks.acquire(resource, { signal: aborted })).rejects.toThrow("already");
    await locks.close();
  });
});
