// list({ kind }) on real Redis: semaphores and read-write locks are listed from Redis (whoever holds them), with
// their holders, permit count, token and, for this Locks's own holds, the lease; each kind lists only its own keys.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedlock, InvalidOptionError, type LockInfo } from "../../src/index.js";
import { connect, makeLocks, uniq } from "../helpers.js";
import { type Nodes, startNodes } from "../redlock-helpers.js";

let redis: Redis;
let nodes: Nodes;
beforeAll(async () => {
  redis = connect();
  nodes = await startNodes(1);
});
afterAll(async () => {
  redis.disconnect();
  await nodes?.close();
});

const owners = (info: LockInfo | undefined) =>
  [...(info?.owners ?? [])].sort((a, b) => a.owner.localeCompare(b.owner));

describe("list({ kind })", () => {
  it("lists semaphores with their holders, permits and token; mutexes and other kinds stay apart", async () => {
    const here = makeLocks(redis, { leaseMs: 5_000 });
    const conn = connect();
    const there = makeLocks(conn, { leaseMs: 5_000 });
    const name = uniq("list-sem");
    const a = await here.locks.semaphore(name, 2).acquire();
    const again = await here.locks.semaphore(name, 2).acquire({ owner: a.owner });
    const b = await there.locks.semaphore(name, 2).acquire();
    const mutex = await here.locks.acquire(name);
    const rw = await here.locks.readWrite(name).read.acquire();
    // A process queued for the full semaphore, another for the mutex.
    const semWaits = there.locks.semaphore(name, 2).acquire({ waitMs: 10_000 });
    const mutexWaits = there.locks.acquire(name, { waitMs: 10_000 });
    await expect
      .poll(async () => {
        const [s] = await here.locks.list({ kind: "semaphore", match: name });
        const [m] = await here.locks.list({ match: name });
        return [s?.waiting, m?.waiting];
      })
      .toEqual([1, 1]);

    const [sem, ...more] = await here.locks.list({ kind: "semaphore", match: name });
    expect(more).toEqual([]);
    expect(sem?.key).toBe(`lock:semaphore:{${name}}`);
    expect(sem?.resource).toBe(name);
    expect(sem?.permits).toBe(2);
    expect(owners(sem)).toEqual(
      [
        { owner: a.owner, count: 2 },
        { owner: b.owner, count: 1 },
      ].sort((x, y) => x.owner.localeCompare(y.owner)),
    );
    expect(sem?.token).toBeGreaterThanOrEqual(b.token ?? 0);
    expect(sem?.pttlMs).toBeGreaterThan(0);
    // Another process lists the same semaphore; the lease is told only where a hold of its owner is held.
    const seenThere = await there.locks.list({ kind: "semaphore", match: name });
    expect(seenThere.map((i) => i.key)).toEqual([sem?.key]);

    // The default is the mutex, which lists the mutex alone.
    const mutexes = await here.locks.list({ match: name });
    expect(mutexes.map((i) => i.key)).toEqual([`lock:{${name}}`]);
    expect(mutexes[0]?.permits).toBeUndefined();
    expect((await here.locks.list({ kind: "mutex", match: name })).map((i) => i.key)).toEqual([
      `lock:{${name}}`,
    ]);

    for (const h of [again, a, b, mutex, rw]) await h.release();
    for (const h of [await semWaits, await mutexWaits]) await h.release();
    expect(await here.locks.list({ kind: "semaphore", match: name })).toEqual([]);
    await Promise.all([here.locks.close(), there.locks.close()]);
    conn.disconnect();
  });

  it("lists read-write locks with each holder's mode, and the lease of this Locks's read or write hold", async () => {
    const { locks } = makeLocks(redis, { leaseMs: 5_000 });
    const conn = connect();
    const other = makeLocks(conn, { leaseMs: 5_000 });
    const read = uniq("list-rw-read");
    const write = uniq("list-rw-write");
    const r1 = await locks.readWrite(read).read.acquire();
    const r2 = await other.locks.readWrite(read).read.acquire();
    const w = await locks.readWrite(write).write.acquire({ leaseMs: 4_000 });
    const listed = await locks.list({ kind: "read-write", match: "list-rw-*" });
    const byKey = new Map(listed.map((i) => [i.key, i]));
    const readers = byKey.get(`lock:rw:{${read}}`);
    const writer = byKey.get(`lock:rw:{${write}}`);
    expect(owners(readers).map((o) => [o.mode, o.count])).toEqual([
      ["read", 1],
      ["read", 1],
    ]);
    expect(owners(writer)).toEqual([{ owner: w.owner, count: 1, mode: "write" }]);
    // No queue for read-write locks: nothing to count.
    expect(writer?.waiting).toBeUndefined();
    // The write hold is this Locks's (its write side), so its lease is told; r1's too when it is listed first.
    expect(writer?.leaseMs).toBe(4_000);
    expect(readers?.permits).toBeUndefined();
    for (const h of [r1, r2, w]) await h.release();
    await Promise.all([locks.close(), other.locks.close()]);
    conn.disconnect();
  });

  it("refuses a kind it does not know, and a kind the store does not have", async () => {
    const { locks } = makeLocks(redis);
    await expect(locks.list({ kind: "queue" as never })).rejects.toBeInstanceOf(InvalidOptionError);
    const redlock = createRedlock({ clients: nodes.clients });
    await expect(redlock.list({ kind: "semaphore" })).rejects.toThrow(/no semaphores or read-write locks/);
    expect(await redlock.list({ kind: "mutex", match: uniq("none") })).toEqual([]);
    const rl = uniq("redlock-listed");
    const rh = await redlock.acquire(rl);
    const [listed] = await redlock.list({ match: rl });
    expect(listed?.owners).toEqual([{ owner: rh.owner, count: 1 }]);
    expect(listed?.waiting).toBeUndefined();
    await rh.release();
    await Promise.all([locks.close(), redlock.close()]);
  });
});
