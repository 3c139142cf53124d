// The semaphore's fair admission across processes: waiting processes queue in Redis (one entry each), and a
// free permit goes to a fresh attempt only when fewer live entries queue ahead of it than permits are free.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocksClosedError } from "../../src/index.js";
import { connect, makeLocks, sleep, uniq } from "../helpers.js";
import { grantedInOrder, leasesOf, queueOf, successorFirst, twoProcessesQueued } from "./semaphore-place.js";

let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

describe("semaphore queue", () => {
  it("a freed permit owed to a queued process wakes only that process: the release names it", async () => {
    // Three processes, each on a connection of its own; each counts its attempts.
    const procs = ["sem-a", "sem-b", "sem-c"].map((instanceId) => {
      const conn = connect();
      const p = { conn, attempts: 0, ...makeLocks(conn, { instanceId, retry: { maxMs: 5_000 } }) };
      const c = conn as unknown as { lockyardSharedAcquire: (...a: unknown[]) => Promise<unknown> };
      const send = c.lockyardSharedAcquire.bind(conn);
      c.lockyardSharedAcquire = (...a) => {
        p.attempts++;
        return send(...a);
      };
      return p;
    });
    const [a, b, c] = procs as [(typeof procs)[0], (typeof procs)[0], (typeof procs)[0]];
    const name = uniq("owed");
    const sub = connect();
    const messages: string[] = [];
    sub.on("message", (_ch, m) => messages.push(m));
    await sub.subscribe(`lock:semaphore:lock-released:{${name}}`);

    const held = await a.locks.semaphore(name, 1).acquire();
    const bWaits = b.locks.semaphore(name, 1).acquire({ waitMs: 10_000 });
    while ((await redis.llen(queueOf(name))) < 1) await sleep(5);
    const cWaits = c.locks.semaphore(name, 1).acquire({ waitMs: 10_000 });
    while ((await redis.llen(queueOf(name))) < 2) await sleep(5);
    // c looks once more when its subscription is in (a release may have gone by before it): let that pass.
    await expect.poll(() => c.attempts).toBe(2);
    await sleep(50);
    const cBefore = c.attempts;
    await held.release();
    const hb = await bWaits;
    await sleep(50);
    // b was first in line: the release named it alone, and c did not look (before: both looked, c was refused).
    expect(messages).toEqual([`n:${hb.owner}`]);
    expect(c.attempts).toBe(cBefore);
    await hb.release();
    const hc = await cWaits;
    expect(messages).toEqual([`n:${hb.owner}`, `n:${hc.owner}`]);
    await hc.release();
    for (const p of procs) {
      await p.locks.close();
      p.conn.disconnect();
    }
    sub.disconnect();
  });

  it("a released permit is not taken by a tryAcquire while another process's waiter queues for it", async () => {
    const x = makeLocks(redis);
    const y = makeLocks(redis, { retry: { maxMs: 5_000 } });
    const name = uniq("fair");
    const held = await x.locks.semaphore(name, 1).acquire();
    const waiting = y.locks.semaphore(name, 1).acquire({ waitMs: 5_000 });
    while ((await redis.llen(queueOf(name))) === 0) await sleep(5);
    await held.release();
    // Same tick as the release's answer: the queued waiter has not looked yet.
    expect(await x.locks.semaphore(name, 1).tryAcquire()).toBeNull();
    const h = await waiting;
    expect(h.isHeld()).toBe(true);
    expect(await redis.llen(queueOf(name))).toBe(0);
    await h.release();
    await Promise.all([x.locks.close(), y.locks.close()]);
  });

  it("a queued entry only holds back as many fresh attempts as there are entries ahead", async () => {
    const { locks } = makeLocks(redis);
    const name = uniq("room");
    // Another process's live entry at the head, 2 permits free: one of them is still ours.
    await redis.rpush(queueOf(name), "other:1");
    await redis.hset(leasesOf(name), "other:1", Date.now() + 60_000);
    const sem = locks.semaphore(name, 2);
    const mine = await sem.tryAcquire();
    expect(mine).not.toBeNull();
    expect(await sem.tryAcquire()).toBeNull();
    await mine!.release();
    await redis.del(queueOf(name), leasesOf(name));
    await locks.close();
  });

  it("a dead process's entry holds a free permit back for at most its queue lease", async () => {
    const { locks } = makeLocks(redis, { retry: { maxMs: 50, jitterMs: 5 } });
    const name = uniq("dead");
    const [sec, usec] = await redis.time();
    const server = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    // An entry nobody refreshes (its process is gone), living 400 ms more in Redis time.
    await redis.rpush(queueOf(name), "gone:1");
    await redis.hset(leasesOf(name), "gone:1", server + 400);
    const started = performance.now();
    const h = await locks.semaphore(name, 1).acquire({ waitMs: 3_000 });
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThan(200);
    expect(waited).toBeLessThan(1_500);
    expect(await redis.llen(queueOf(name))).toBe(0);
    await h.release();
    await locks.close();
  });

  it("a waiter that gives up leaves the queue at once", async () => {
    const x = makeLocks(redis);
    const y = makeLocks(redis);
    const name = uniq("leave");
    const held = await x.locks.semaphore(name, 1).acquire();
    await expect(y.locks.semaphore(name, 1).acquire({ waitMs: 150 })).rejects.toThrow();
    await sleep(20);
    expect(await redis.llen(queueOf(name))).toBe(0);
    await held.release();
    await Promise.all([x.locks.close(), y.locks.close()]);
  });

  it("a waiter that gives up passes its process's place in the queue to that process's next waiter", async () => {
    const holder = makeLocks(redis);
    const conns = [connect(), connect()] as const;
    const a = makeLocks(conns[0], { instanceId: "place-a", retry: { maxMs: 5_000 } });
    const b = makeLocks(conns[1], { instanceId: "place-b", retry: { maxMs: 5_000 } });
    const q = await twoProcessesQueued(redis, holder.locks, a.locks, b.locks);
    q.gaveUp.abort(new Error("a1 gives up"));
    await expect(q.a1).rejects.toThrow("a1 gives up");
    // a2 took a1's place at the front, ahead of b (before: a1's entry was dropped and a2 queued behind b).
    await successorFirst(redis, q.name, q.aEntry, q.bEntry);
    const first = await redis.lindex(queueOf(q.name), 0);
    expect(Number(await redis.hget(leasesOf(q.name), first!))).toBeGreaterThan(0);
    expect(await redis.hget(leasesOf(q.name), q.aEntry)).toBeNull();
    await grantedInOrder(q.held, q.a2, q.b1);
    for (const l of [holder, a, b]) await l.locks.close();
    for (const c of conns) c.disconnect();
  });

  it("close() while a leave that named a successor is in flight leaves no entry of that process in the queue", async () => {
    const holder = makeLocks(redis);
    const conns = [connect(), connect()] as const;
    const a = makeLocks(conns[0], { instanceId: "place-close-a", retry: { maxMs: 5_000 } });
    const b = makeLocks(conns[1], { instanceId: "place-close-b", retry: { maxMs: 5_000 } });
    const q = await twoProcessesQueued(redis, holder.locks, a.locks, b.locks);
    q.gaveUp.abort(new Error("a1 gives up"));
    // a1's rejection comes after its leave (naming a2) was sent, and before any answer can: a closes with that
    // leave in flight, and a2 ends with it.
    await expect(q.a1).rejects.toThrow("a1 gives up");
    const closing = a.locks.close();
    await expect(q.a2).rejects.toThrow(LocksClosedError);
    await closing;
    // a2 took a1's place and then gave up unheard: its entry is left too, well within its 1.56 s lease.
    await expect.poll(() => redis.lrange(queueOf(q.name), 0, -1), { timeout: 500 }).toEqual([q.bEntry]);
    await q.held.release();
    await (await q.b1).release();
    await Promise.all([holder.locks.close(), b.locks.close()]);
    for (const c of conns) c.disconnect();
  });
});
