import { createLocks } from "@lockyard/lock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext, uid } from "../../test/context.js";
import { LockEvents } from "../../test/lock-events.js";
import { createCaller } from "../root.js";
import type { LockView } from "../types.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext();
});
afterAll(() => t.close());

async function watch(prefix: string): Promise<LockEvents> {
  const abort = new AbortController();
  const caller = createCaller(t.ctx, { signal: abort.signal });
  const events = new LockEvents(await caller.locks.watch({ prefix }), abort);
  expect((await events.next()).kind).toBe("snapshot");
  return events;
}

const row = (events: LockEvents, key: string): LockView | undefined => events.locks.get(`redis:${key}`);
const modes = (l: LockView | undefined) => l?.owners.map((o) => `${o.mode}×${o.count}`).sort();

describe("the live view shows every kind of lock", () => {
  it("locks.list: a mutex, a semaphore with its permits and a read-write lock with its readers", async () => {
    const base = `kinds:${uid()}`;
    const mutex = await t.locks.acquire(`${base}:m`, { leaseMs: 10_000 });
    const sem = t.locks.semaphore(`${base}:s`, 3);
    const permits = [await sem.acquire({ leaseMs: 10_000 }), await sem.acquire({ leaseMs: 10_000 })];
    const rw = t.locks.readWrite(`${base}:rw`);
    const readers = [await rw.read.acquire({ leaseMs: 10_000 }), await rw.read.acquire({ leaseMs: 10_000 })];
    try {
      const { locks } = await t.caller.locks.list({ prefix: base });
      expect(locks.map((l) => [l.resource, l.kind, l.key])).toEqual([
        [`${base}:m`, "mutex", `lock:{${base}:m}`],
        [`${base}:rw`, "read-write", `lock:rw:{${base}:rw}`],
        [`${base}:s`, "semaphore", `lock:semaphore:{${base}:s}`],
      ]);
      const [m, r, s] = locks;
      expect(m).toMatchObject({ permits: null, readWrite: null, token: mutex.token });
      expect(s).toMatchObject({ permits: { used: 2, total: 3 }, readWrite: null });
      expect(s!.owners.map((o) => o.owner).sort()).toEqual(permits.map((p) => p.owner).sort());
      expect(modes(s)).toEqual(["permit×1", "permit×1"]);
      expect(s!.token).toBe(Math.max(...permits.map((p) => p.token!)));
      expect(r).toMatchObject({
        permits: null,
        readWrite: { readers: 2, writer: null, writerWaiting: false },
      });
      expect(r!.owners.map((o) => o.instanceId)).toEqual([t.ctx.config.instanceId, t.ctx.config.instanceId]);
      expect(r!.pttlMs).toBeGreaterThan(5_000);
    } finally {
      for (const h of [mutex, ...permits, ...readers]) await h.release();
    }
    expect((await t.caller.locks.list({ prefix: base })).locks).toEqual([]);
  });

  it("skips the kinds' fence counters and any key under lock: that is not a lock, whatever its type", async () => {
    const base = `kinds:${uid()}`;
    const sem = t.locks.semaphore(`${base}:s`, 1);
    const rw = t.locks.readWrite(`${base}:rw`);
    // Fence counters exist once a grant was made: `lock:semaphore:fence:{…}` and `lock:rw:fence:{…}` match lock:*.
    await (await sem.acquire()).release();
    await (await rw.write.acquire()).release();
    expect(await t.redis.exists(`lock:semaphore:fence:{${base}:s}`, `lock:rw:fence:{${base}:rw}`)).toBe(2);
    const junk = [`lock:{${base}:string}`, `lock:rw:{${base}:list}`, `lock:semaphore:{${base}:hash}`];
    await t.redis.set(junk[0]!, "someone else's");
    await t.redis.rpush(junk[1]!, "x");
    await t.redis.hset(junk[2]!, "not-a-holder", "garbage", "~permits", "2");
    await t.redis.hset(`lock:other:{${base}:x}`, "owner", "1");
    const held = await t.locks.acquire(`${base}:real`, { leaseMs: 10_000 });
    const events = await watch(base);
    try {
      const { locks } = await t.caller.locks.list({ prefix: base });
      expect(locks.map((l) => l.resource)).toEqual([`${base}:real`]);
      expect([...events.locks.values()].map((l) => l.resource)).toEqual([`${base}:real`]);
      // Touching them sends events the observer reads and drops; the real lock still comes through.
      await t.redis.set(junk[0]!, "again");
      await t.redis.hset(junk[2]!, "still", "garbage");
      await held.release();
      await events.until(() => events.locks.size === 0);
    } finally {
      await events.close();
      await t.redis.del(...junk, `lock:other:{${base}:x}`);
    }
  });

  it("locks.watch: permits taken and given back, readers, a waiting writer, then the writer", async () => {
    const base = `kinds:${uid()}`;
    const semKey = `lock:semaphore:{${base}:s}`;
    const rwKey = `lock:rw:{${base}:rw}`;
    const events = await watch(base);
    const other = createLocks({ redis: t.redis, instanceId: uid("other") });
    try {
      const sem = t.locks.semaphore(`${base}:s`, 2);
      const a = await sem.acquire({ leaseMs: 10_000 });
      const added = await events.delta(semKey);
      expect(added.added[0]).toMatchObject({ kind: "semaphore", permits: { used: 1, total: 2 } });
      const b = await sem.acquire({ leaseMs: 10_000 });
      await events.until(() => row(events, semKey)?.permits?.used === 2);
      await a.release();
      await events.until(() => row(events, semKey)?.permits?.used === 1);
      expect(row(events, semKey)!.owners.map((o) => o.owner)).toEqual([b.owner]);
      await b.release();
      await events.until(() => !events.locks.has(`redis:${semKey}`));

      const rw = t.locks.readWrite(`${base}:rw`);
      const r1 = await rw.read.acquire({ leaseMs: 10_000 });
      const r2 = await rw.read.acquire({ leaseMs: 10_000 });
      await events.until(() => row(events, rwKey)?.readWrite?.readers === 2);
      expect(row(events, rwKey)).toMatchObject({ kind: "read-write", permits: null });
      expect(modes(row(events, rwKey))).toEqual(["read×1", "read×1"]);

      const writing = other.readWrite(`${base}:rw`).write.acquire({ waitMs: 10_000, leaseMs: 10_000 });
      await events.until(() => row(events, rwKey)?.readWrite?.writerWaiting === true);
      expect(row(events, rwKey)!.readWrite!.readers).toBe(2);
      await r1.release();
      await r2.release();
      const w = await writing;
      await events.until(() => row(events, rwKey)?.readWrite?.writer === w.owner);
      expect(row(events, rwKey)!.readWrite).toEqual({ readers: 0, writer: w.owner, writerWaiting: false });
      expect(modes(row(events, rwKey))).toEqual(["write×1"]);
      expect(row(events, rwKey)!.owners[0]!.instanceId).not.toBe(t.ctx.config.instanceId);
      await w.release();
      await events.until(() => !events.locks.has(`redis:${rwKey}`));
    } finally {
      await events.close();
      await other.close();
    }
  });

  it("drops a semaphore holder whose own lease ended, though no script ran and its field remains", async () => {
    const base = `kinds:${uid()}`;
    const key = `lock:semaphore:{${base}}`;
    const sem = t.locks.semaphore(base, 3);
    const events = await watch(base);
    // A fixed lease and no release: a holder that crashed. The other holder keeps the key alive.
    const crashed = await sem.acquire({ leaseMs: 600 });
    const alive = await sem.acquire({ leaseMs: 20_000 });
    try {
      await events.until(() => row(events, key)?.permits?.used === 2);
      await events.until(() => row(events, key)?.permits?.used === 1);
      expect(row(events, key)!.owners.map((o) => o.owner)).toEqual([alive.owner]);
      // Nothing wrote the key: the field is still there, only its lease says it is dead.
      expect(await t.redis.hexists(key, crashed.owner)).toBe(1);
      expect((await t.caller.locks.list({ prefix: base })).locks[0]!.permits).toEqual({ used: 1, total: 3 });
    } finally {
      await events.close();
      await alive.release();
    }
  });
});
