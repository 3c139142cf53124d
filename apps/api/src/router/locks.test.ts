import { createLocks, createRedlock } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext, uid } from "../../test/context.js";
import { LockEvents } from "../../test/lock-events.js";
import { redisOptions } from "../redis.js";
import { createCaller } from "../root.js";
import type { LocksDeltaEvent } from "../types.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext();
});
afterAll(() => t.close());

async function watch(ctx: typeof t.ctx, prefix: string) {
  const abort = new AbortController();
  const caller = createCaller(ctx, { signal: abort.signal });
  const events = new LockEvents(await caller.locks.watch({ prefix }), abort);
  const first = await events.next();
  expect(first.kind).toBe("snapshot");
  return events;
}

describe("locks.list", () => {
  it("lists held locks with owner, holding instance, count, token, TTL and waiters", async () => {
    const resource = `test:${uid()}`;
    await t.locks.withLock(resource, async (outer) => {
      await t.locks.withLock(resource, async () => {
        const snap = await t.caller.locks.list({ prefix: resource });
        expect(snap.instanceId).toBe(t.ctx.config.instanceId);
        expect(snap.locks).toHaveLength(1);
        const [l] = snap.locks;
        expect(l).toMatchObject({ resource, key: `lock:{${resource}}`, token: outer.token, waiters: 0 });
        expect(l!.owners).toEqual([
          { owner: outer.owner, count: 2, instanceId: t.ctx.config.instanceId, mode: "exclusive" },
        ]);
        expect(l!.pttlMs).toBeGreaterThan(0);
        expect(l!.pttlMs).toBeLessThanOrEqual(2_000);
      });
    });
    expect((await t.caller.locks.list({ prefix: resource })).locks).toHaveLength(0);
  });
});

describe("locks.watch", () => {
  it("sends a snapshot, then deltas for add, re-entry, renewal, waiters and remove", async () => {
    const resource = `test:${uid()}`;
    const key = `lock:{${resource}}`;
    const before = await t.locks.acquire(`${resource}:before`, { leaseMs: 10_000 });
    const events = await watch(t.ctx, resource);
    try {
      expect([...events.locks.values()].map((l) => l.resource)).toEqual([`${resource}:before`]);

      const h = await t.locks.acquire(resource, { leaseMs: 5_000 });
      const added = await events.delta(key);
      expect(added.added).toHaveLength(1);
      expect(added.added[0]).toMatchObject({
        store: "redis",
        key,
        resource,
        token: h.token,
        waiters: 0,
        owners: [{ owner: h.owner, count: 1, instanceId: t.ctx.config.instanceId, mode: "exclusive" }],
      });
      expect(added.added[0]!.pttlMs).toBeLessThanOrEqual(5_000);
      expect(added.removed).toEqual([]);

      const inner = await t.locks.acquire(resource, { owner: h.owner, leaseMs: 5_000 });
      const reentered = await events.delta(key);
      expect(reentered.changed[0]?.owners).toEqual([
        { owner: h.owner, count: 2, instanceId: t.ctx.config.instanceId, mode: "exclusive" },
      ]);

      // A renewal moves the expiry forward: `changed` with a TTL that jumped back up.
      const lastSeen = reentered.at + reentered.changed[0]!.pttlMs;
      await new Promise((r) => setTimeout(r, 300));
      await h.renew();
      const renewed = await events.delta(key);
      expect(renewed.at + renewed.changed[0]!.pttlMs).toBeGreaterThan(lastSeen);

      // Another owner waiting sets the waiters mark.
      const other = createLocks({ redis: t.redis, instanceId: uid("other") });
      const waiting = other.acquire(resource, { waitMs: 10_000, leaseMs: 5_000 });
      const marked = await events.delta(key);
      expect(marked.changed[0]?.waiters).toBe(1);

      await inner.release();
      const decremented = await events.delta(key);
      expect(decremented.changed[0]?.owners[0]?.count).toBe(1);

      await h.release();
      // The waiter takes it over: removed (or changed) to the new owner, never a stale row.
      const next = await waiting;
      await events.until(() => [...events.locks.values()].some((l) => l.owners[0]?.owner === next.owner));
      await next.release();
      // The waiter's adoption of the handoff can land as its own change after the handoff was seen: the new
      // owner still, never a stale row, and then the removal.
      let removed = await events.delta(key);
      while (removed.removed.length === 0) {
        expect(removed.changed[0]?.owners[0]?.owner).toBe(next.owner);
        removed = await events.delta(key);
      }
      expect(removed.removed).toEqual([key]);
      expect(events.locks.has(`redis:${key}`)).toBe(false);
      await other.close();
    } finally {
      await events.close();
      await before.release();
    }
  });

  it("accepts lastEventId and an intervalMs below any floor, and starts with a snapshot", async () => {
    const abort = new AbortController();
    const caller = createCaller(t.ctx, { signal: abort.signal });
    const stream = await caller.locks.watch({ prefix: "none:", intervalMs: 0, lastEventId: "api-1:42" });
    const events = new LockEvents(stream, abort);
    expect(await events.next()).toMatchObject({ kind: "snapshot", locks: [] });
    await events.close();
  });

  it("shows Redlock and PostgreSQL locks with their store, and a removal keeps the same key's other store", async () => {
    const redlockClients = [1, 2, 3].map((db) => new Redis(t.redis.options.port!, { ...redisOptions, db }));
    const redlock = createRedlock({ clients: redlockClients, instanceId: uid("rl") });
    const c = await testContext({ withPostgres: true, redlock });
    const resource = `test:${uid()}`;
    const key = `lock:{${resource}}`;
    const events = await watch(c.ctx, resource);
    try {
      const r = await redlock.acquire(resource, { leaseMs: 10_000 });
      await events.until(() => events.locks.has(`redlock:${key}`));
      const p = await c.ctx.postgres!.locks.acquire(resource, { leaseMs: 10_000 });
      await events.until(() => events.locks.has(`postgres:${key}`));
      const h = await c.locks.acquire(resource, { leaseMs: 10_000 });
      await events.until(() => events.locks.has(`redis:${key}`));
      expect(events.locks.get(`redlock:${key}`)).toMatchObject({ store: "redlock", token: null, waiters: 0 });
      expect(events.locks.get(`postgres:${key}`)).toMatchObject({ store: "postgres", resource });

      await h.release();
      const removal = await events.until(
        (e): e is LocksDeltaEvent => e.kind === "delta" && e.removed.includes(key),
      );
      // `removed` names keys: the locks still held on that key in other stores come back in the same delta.
      expect(removal.added.map((l) => l.store).sort()).toEqual(["postgres", "redlock"]);
      expect([...events.locks.keys()].sort()).toEqual([`postgres:${key}`, `redlock:${key}`]);

      await Promise.all([r.release(), p.release()]);
      await events.until(() => events.locks.size === 0);
    } finally {
      await events.close();
      await c.close();
      await redlock.close();
      for (const r of redlockClients) r.disconnect();
    }
  });
});
