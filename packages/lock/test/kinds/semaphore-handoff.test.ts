// A semaphore's release grants the freed permit to its own process's next waiter when that waiter's attempt
// would have got it (shared-release.ts): a handoff within the process that costs the waiter no call, fair to
// other processes, and safe when the waiter gives up or the answer is lost.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocksClosedError } from "../../src/index.js";
import { connect, connectThrough, makeLocks, replyCutterForFile, sleep, uniq } from "../helpers.js";
import { grantedInOrder, queueOf } from "./semaphore-place.js";

const cut = replyCutterForFile();
let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

const keyOf = (name: string) => `lock:semaphore:{${name}}`;

/** Counts the semaphore script calls a connection sends (the commands exist once its Locks is made). */
function countCalls(conn: Redis) {
  const counts = { attempts: 0, releases: 0 };
  const c = conn as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  for (const [command, counter] of [
    ["lockyardSharedAcquire", "attempts"],
    ["lockyardSharedRelease", "releases"],
  ] as const) {
    const send = c[command]!.bind(conn);
    c[command] = (...a) => {
      counts[counter]++;
      return send(...a);
    };
  }
  return counts;
}

/** Holder fields of a semaphore's hash (its marks left out). */
async function holdersOf(name: string): Promise<string[]> {
  return Object.keys(await redis.hgetall(keyOf(name))).filter((f) => !f.startsWith("~"));
}

describe("semaphore handoff within a process", () => {
  it("a release grants the freed permit to the process's next waiter: the waiters send no attempt", async () => {
    const conn = connect();
    const { locks } = makeLocks(conn, { retry: { maxMs: 5_000 } });
    const counts = countCalls(conn);
    const name = uniq("sem-hand");
    const sem = locks.semaphore(name, 1);
    const h1 = await sem.acquire();
    const w2 = sem.acquire({ waitMs: 10_000 });
    const w3 = sem.acquire({ waitMs: 10_000 });
    // w2, the head, was refused once (and looks once more when its subscription is in); w3 waits behind it.
    await expect.poll(() => counts.attempts).toBeGreaterThanOrEqual(2);
    await sleep(100);
    const attempts = counts.attempts;

    await h1.release();
    const h2 = await w2;
    expect(await holdersOf(name)).toEqual([h2.owner]);
    await h2.release();
    const h3 = await w3;
    expect(await holdersOf(name)).toEqual([h3.owner]);
    // Two grants, no attempt: each release carried the next waiter's grant.
    expect(counts.attempts).toBe(attempts);
    expect(counts.releases).toBe(2);
    expect(h2.token!).toBeGreaterThan(h1.token!);
    expect(h3.token!).toBeGreaterThan(h2.token!);
    expect(h3.isHeld()).toBe(true);
    await h3.release();
    expect(await redis.exists(keyOf(name))).toBe(0);
    await locks.close();
    conn.disconnect();
  });

  it("with permits left free after the grant, the next waiter tries at once", async () => {
    const { locks } = makeLocks(redis, { retry: { maxMs: 5_000 } });
    const other = makeLocks(redis);
    const name = uniq("sem-room");
    const sem = locks.semaphore(name, 2);
    const gone = await other.locks.semaphore(name, 2).acquire();
    const h1 = await sem.acquire();
    const w3 = sem.acquire({ waitMs: 10_000 });
    const w4 = sem.acquire({ waitMs: 10_000 });
    await sleep(100);
    // The other process's permit ends without a release (its lease ran out: nothing is published), then h1's
    // release hands its permit to w3 and says one is still free: w4 tries at once instead of waiting for a
    // message that will not come (its fallback look is 5 s away).
    await redis.hdel(keyOf(name), gone.owner);
    await h1.release();
    const h3 = await w3;
    const h4 = await Promise.race([w4, sleep(1_000).then(() => null)]);
    expect(h4?.isHeld()).toBe(true);
    expect((await holdersOf(name)).sort()).toEqual([h3.owner, h4!.owner].sort());
    await Promise.all([h3.release(), h4!.release(), w4]);
    await Promise.all([locks.close(), other.locks.close()]);
  });

  it("keeps the permit from its own next waiter while another process's entry queues ahead of it", async () => {
    const conns = [connect(), connect()] as const;
    const a = makeLocks(conns[0], { instanceId: "sem-hand-a", retry: { maxMs: 5_000 } });
    const b = makeLocks(conns[1], { instanceId: "sem-hand-b", retry: { maxMs: 5_000 } });
    const name = uniq("sem-fair");
    const held = await a.locks.semaphore(name, 1).acquire();
    const b1 = b.locks.semaphore(name, 1).acquire({ waitMs: 10_000 });
    while ((await redis.llen(queueOf(name))) < 1) await sleep(5);
    const a2 = a.locks.semaphore(name, 1).acquire({ waitMs: 10_000 });
    while ((await redis.llen(queueOf(name))) < 2) await sleep(5);
    // Its refusal answered (and its look after subscribing): a2 now waits in a's line, and the release names it.
    await sleep(150);
    // a's release names a2, but b queued first: b1 gets the permit, a2 the next one.
    await grantedInOrder(held, b1, a2);
    for (const p of [a, b]) await p.locks.close();
    for (const c of conns) c.disconnect();
  });

  it("a waiter that gives up as the release naming it is sent passes the granted permit on", async () => {
    const { locks } = makeLocks(redis, { retry: { maxMs: 5_000 } });
    const name = uniq("sem-gone");
    const sem = locks.semaphore(name, 1);
    const h1 = await sem.acquire();
    const quits = new AbortController();
    const w2 = sem.acquire({ waitMs: 10_000, signal: quits.signal });
    const w3 = sem.acquire({ waitMs: 10_000 });
    await sleep(100);
    // The release names w2 (its head) and is on its way; w2 aborts before the answer.
    const released = h1.release();
    quits.abort(new Error("gave up"));
    await expect(w2).rejects.toThrow("gave up");
    await released;
    // The permit Redis granted w2 comes back at once, and w3 gets it (not after w2's 30 s lease).
    const started = performance.now();
    const h3 = await w3;
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await holdersOf(name)).toEqual([h3.owner]);
    await h3.release();
    await locks.close();
  });

  it("a waiter whose grant's answer was lost adopts the permit Redis gave it, as one hold", async () => {
    const through = await connectThrough(cut.cutter.url);
    const { locks } = makeLocks(through, { retry: { maxMs: 300 } });
    const name = uniq("sem-lost");
    const sem = locks.semaphore(name, 1);
    const h1 = await sem.acquire();
    const w2 = sem.acquire({ waitMs: 10_000 });
    await sleep(100);
    // Redis runs the release (granting w2 the permit) but its answer is held back; then the connection goes.
    cut.cutter.holdReplies();
    const released = h1.release().catch(() => "no answer");
    await expect.poll(async () => (await holdersOf(name)).filter((o) => o !== h1.owner).length).toBe(1);
    cut.cutter.cut();
    expect(await released).toBe("no answer");
    const h2 = await w2;
    expect(h2.isHeld()).toBe(true);
    expect(await holdersOf(name)).toEqual([h2.owner]);
    // Adopted, not re-entered: one release gives the permit back.
    expect(await h2.release()).toBe("released");
    expect(await redis.exists(keyOf(name))).toBe(0);
    await locks.close();
    through.disconnect();
  });

  it("a waiter that gave up and whose grant's answer was lost: the permit Redis gave it comes back at once", async () => {
    const through = await connectThrough(cut.cutter.url);
    const direct = connect();
    const a = makeLocks(through, { instanceId: "sem-gone-a", retry: { maxMs: 300 } });
    const b = makeLocks(direct, { instanceId: "sem-gone-b", retry: { maxMs: 5_000 } });
    const name = uniq("sem-lost-gone");
    const h1 = await a.locks.semaphore(name, 1).acquire();
    const quits = new AbortController();
    const w2 = a.locks.semaphore(name, 1).acquire({ waitMs: 10_000, signal: quits.signal });
    while ((await redis.llen(queueOf(name))) < 1) await sleep(5);
    const b1 = b.locks.semaphore(name, 1).acquire({ waitMs: 10_000 });
    while ((await redis.llen(queueOf(name))) < 2) await sleep(5);
    await sleep(150);
    // a's release grants w2 in Redis (a queued first); its answer is held back, w2 gives up, the connection goes.
    cut.cutter.holdReplies();
    const released = h1.release().catch(() => "no answer");
    await expect.poll(async () => (await holdersOf(name)).filter((o) => o !== h1.owner).length).toBe(1);
    const [granted] = await holdersOf(name);
    quits.abort(new Error("gave up"));
    await expect(w2).rejects.toThrow("gave up");
    cut.cutter.cut();
    expect(await released).toBe("no answer");
    // Only a can give w2's permit back, in the background: b1 gets it at once, not after w2's 30 s lease (nor its
    // own 10 s wait).
    const started = performance.now();
    const hb = await b1;
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(await holdersOf(name)).toEqual([hb.owner]);
    expect(hb.owner).not.toBe(granted);
    await hb.release();
    await Promise.all([a.locks.close(), b.locks.close()]);
    through.disconnect();
    direct.disconnect();
  });

  it("close() while a release that names a waiter is in flight: the permit granted to it is given back", async () => {
    const { locks } = makeLocks(redis, { retry: { maxMs: 5_000 } });
    const name = uniq("sem-close");
    const sem = locks.semaphore(name, 1);
    const h1 = await sem.acquire();
    const w2 = sem.acquire({ waitMs: 10_000 });
    await sleep(150);
    // The release (naming w2) is sent, and the Locks closes before its answer: w2 ends with the close.
    const released = h1.release();
    const closing = locks.close();
    await expect(w2).rejects.toThrow(LocksClosedError);
    await Promise.all([released, closing]);
    // Redis granted w2 the permit; nobody will hold it, so it must not stay for w2's 30 s lease.
    await expect.poll(() => redis.exists(keyOf(name)), { timeout: 1_000 }).toBe(0);
  });
});
