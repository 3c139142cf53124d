// Issue 13: a release hands the lock to the first live waiter of the Redis-side queue in the same script,
// and tells only that waiter. Each Locks below has a connection of its own, as a separate process would.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocksOptions, RetryOptions } from "../../src/index.js";
import { queueKeyOf } from "../../src/resource.js";
import { commandStats, connect, deafen, makeLocks, sleep, uniq } from "../helpers.js";

let redis: Redis;
const extra: Redis[] = [];
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
  for (const r of extra) r.disconnect();
});

/** A Locks on a connection of its own: another process, as far as Redis can tell. */
function process_(
  instanceId: string,
  retry: RetryOptions = { maxMs: 500, jitterMs: 20 },
  opts: Partial<LocksOptions> = {},
) {
  const conn = connect();
  extra.push(conn);
  return makeLocks(conn, { instanceId, retry, ...opts });
}

const keyOf = (resource: string) => `lock:{${resource}}`;
const queueOf = (resource: string) => redis.lrange(queueKeyOf(keyOf(resource)), 0, -1);

describe("the release hands the lock over", () => {
  it("to the queued waiter of another process: one message naming it, adopted with count 1, a higher token", async () => {
    const resource = uniq("handoff");
    const a = process_("proc-a");
    // Adopted by an attempt; by-message.test.ts has the default, held from the message.
    const b = process_("proc-b", undefined, { handoffAdoption: "attempt" });
    const held = await a.locks.acquire(resource);
    const waiting = b.locks.acquire(resource);
    await expect.poll(() => queueOf(resource)).toHaveLength(1);
    const sub = connect();
    extra.push(sub);
    const messages: [string, string][] = [];
    sub.on("pmessage", (_p, ch, m) => messages.push([ch, m]));
    await sub.psubscribe(`lock-released:{${resource}}*`);
    expect(await held.release()).toBe("released");
    const h = await waiting;
    // The owner, the token it was handed and the claim's lease (a's retry.queueLeaseMs: 3 × (500 + 20)), on
    // b's own handoff channel only: the release channel, which every waiting process hears, gets nothing.
    await sleep(50);
    expect(messages).toEqual([[`lock-released:{${resource}}:proc-b`, `c:${h.owner} ${h.token} 1560`]]);
    expect(h.token).toBeGreaterThan(held.token!);
    // Adopted, not re-entered: the release had handed it a count of 1.
    expect(b.events.find((e) => e.type === "acquired")).toMatchObject({ count: 1 });
    const fields = await redis.hgetall(keyOf(resource));
    expect(fields[h.owner]).toBe("1");
    expect(fields["~handed"]).toBeUndefined();
    expect(await queueOf(resource)).toEqual([]);
    await h.release();
    await a.locks.close();
    await b.locks.close();
  });

  it("to the next waiter of the releasing process without any call of its own", async () => {
    const resource = uniq("local");
    const a = process_("proc-local");
    const held = await a.locks.acquire(resource);
    const waiters = [a.locks.acquire(resource), a.locks.acquire(resource), a.locks.acquire(resource)];
    await expect.poll(() => a.events.filter((e) => e.type === "contended").length).toBe(3);
    const before = await commandStats(redis);
    await held.release();
    for (const w of waiters) await (await w).release();
    const after = await commandStats(redis);
    // Four releases, nothing else: each release granted the next waiter in its reply.
    const scripts = (stats: Record<string, number>) => (stats.evalsha ?? 0) + (stats.eval ?? 0);
    expect(scripts(after) - scripts(before)).toBe(4);
    await a.locks.close();
  });

  it("tryAcquire never queues, and never takes a free lock from a live queued waiter", async () => {
    const resource = uniq("try");
    const a = process_("proc-hold");
    const b = process_("proc-wait", { maxMs: 5_000, jitterMs: 20 });
    const c = process_("proc-try");
    await a.locks.acquire(resource);
    const ac = new AbortController();
    const waiting = b.locks.acquire(resource, { waitMs: 10_000, signal: ac.signal }).catch((e: unknown) => e);
    await expect.poll(() => queueOf(resource)).toHaveLength(1);
    expect(await c.locks.tryAcquire(resource)).toBeNull();
    expect(await queueOf(resource)).toHaveLength(1);
    // The lock vanishes without a release (as when a lease runs out): free, but b queues first and is alive.
    await redis.del(keyOf(resource));
    expect(await c.locks.tryAcquire(resource)).toBeNull();
    expect(await c.locks.acquire(resource, { waitMs: 0 }).catch((e: unknown) => e)).toMatchObject({
      name: "LockTimeoutError",
    });
    expect(await queueOf(resource)).toHaveLength(1);
    ac.abort(new Error("done"));
    await waiting;
    await expect.poll(() => queueOf(resource)).toEqual([]);
    // With nobody queued, the free lock is anyone's.
    const h = await c.locks.tryAcquire(resource);
    expect(h).not.toBeNull();
    await h!.release();
    for (const p of [a, b, c]) await p.locks.close();
  });
});

describe("what no waiter may do is hang", () => {
  it("a waiter whose handoff message is lost adopts the lock on its own re-check, within retry.maxMs", async () => {
    const resource = uniq("lost-message");
    const a = process_("proc-rel");
    const retry = { maxMs: 300, jitterMs: 20 };
    const b = process_("proc-deaf", retry);
    const held = await a.locks.acquire(resource);
    const waiting = b.locks.acquire(resource, { waitMs: 10_000 });
    await expect.poll(() => queueOf(resource)).toHaveLength(1);
    await deafen(b.locks);
    const releasedAt = performance.now();
    await held.release();
    const h = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(retry.maxMs + retry.jitterMs + 150);
    expect(b.events.find((e) => e.type === "acquired")).toMatchObject({ count: 1 });
    await h.release();
    await a.locks.close();
    await b.locks.close();
  });

  it("a waiter that gives up after the lock was handed to it passes it on at once", async () => {
    const resource = uniq("abort-handed");
    const a = process_("proc-first");
    const b = process_("proc-gives-up", { maxMs: 5_000, jitterMs: 20 });
    const c = process_("proc-after");
    const held = await a.locks.acquire(resource);
    const ac = new AbortController();
    const givingUp = b.locks
      .acquire(resource, { waitMs: 10_000, signal: ac.signal })
      .catch((e: unknown) => e);
    await expect.poll(() => queueOf(resource)).toHaveLength(1);
    const next = c.locks.acquire(resource, { waitMs: 10_000 });
    await expect.poll(() => queueOf(resource)).toHaveLength(2);
    // b cannot hear its handoff and would look only after 5 s; it gives up first.
    await deafen(b.locks);
    await held.release();
    const [bOwner] = await redis.hmget(keyOf(resource), "~handed");
    expect(bOwner).toMatch(/^proc-gives-up:/);
    const abortedAt = performance.now();
    ac.abort(new Error("caller gave up"));
    expect(await givingUp).toMatchObject({ message: "caller gave up" });
    const h = await next;
    // Passed on by b's leave, not by the 1.5 s claim running out.
    expect(performance.now() - abortedAt).toBeLessThan(300);
    expect(h.isHeld()).toBe(true);
    await h.release();
    for (const p of [a, b, c]) await p.locks.close();
  });

  it("a waiter that gives up while its first attempt is stalled in Redis leaves the queue that attempt joins", async () => {
    const resource = uniq("stalled-join");
    const a = process_("proc-holds");
    const b = process_("proc-stalled", { maxMs: 5_000, jitterMs: 20, queueLeaseMs: 10_000 });
    const held = await a.locks.acquire(resource);
    const admin = connect();
    extra.push(admin);
    await admin.call("CLIENT", "PAUSE", "1000", "ALL");
    // b's attempt waits behind the pause; its 300 ms run out first; then Redis refuses it and queues b.
    expect(await b.locks.acquire(resource, { waitMs: 300 }).catch((e: unknown) => e)).toMatchObject({
      name: "LockTimeoutError",
    });
    // Without the leave b's entry would stay 10 s, and a's release would hand the lock to nobody.
    await expect.poll(() => queueOf(resource), { timeout: 2_000 }).toEqual([]);
    expect(await held.release()).toBe("released");
    expect(await redis.exists(keyOf(resource))).toBe(0);
    await a.locks.close();
    await b.locks.close();
  });

  it("a waiter that gives up while its own release names it leaves the queue once that release answers", async () => {
    const resource = uniq("named-gives-up");
    const a = process_("proc-queued");
    // Strict order: b's release hands the lock to a's entry and puts b's waiter back in the queue.
    const bConn = connect();
    extra.push(bConn);
    const b = makeLocks(bConn, {
      instanceId: "proc-named",
      localStreak: 0,
      localStreakMs: 0,
      retry: { maxMs: 5_000, jitterMs: 20, queueLeaseMs: 10_000 },
    });
    const held = await b.locks.acquire(resource);
    const aWaits = a.locks.acquire(resource, { waitMs: 10_000 });
    await expect.poll(() => queueOf(resource)).toHaveLength(1);
    const bGivesUp = b.locks.acquire(resource, { waitMs: 400 }).catch((e: unknown) => e);
    await expect.poll(() => queueOf(resource)).toHaveLength(2);
    // Redis stalls with b's release (naming its waiter) in flight; the waiter's wait runs out meanwhile.
    const admin = connect();
    extra.push(admin);
    await admin.call("CLIENT", "PAUSE", "1000", "ALL");
    const released = held.release();
    expect(await bGivesUp).toMatchObject({ name: "LockTimeoutError" });
    expect(await released).toBe("released");
    const h = await aWaits;
    // Without a leave its entry would stay 10 s, and a's release would hand the lock to nobody.
    await expect.poll(() => queueOf(resource), { timeout: 2_000 }).toEqual([]);
    expect(await h.release()).toBe("released");
    expect(await redis.exists(keyOf(resource))).toBe(0);
    await a.locks.close();
    await b.locks.close();
  });
});
