import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LockLostError } from "../../src/index.js";
import { sleep, uniq } from "../helpers.js";
import { makePgLocks, pgPool, row, TABLE } from "../pg-helpers.js";

let pool: pg.Pool;
beforeAll(async () => {
  pool = await pgPool();
});
afterAll(async () => {
  await pool.end();
});

/** Blocks this thread, timers and all, as a GC pause or a stopped VM would. */
const freeze = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

describe("PostgreSQL backend: leases, watchdog and lost locks", () => {
  it("a lease expires while the holder is paused: another owner gets it, the old owner's release and renew are refused", async () => {
    const a = makePgLocks(pool);
    const b = makePgLocks(pool);
    const r = uniq("paused");
    const ha = await a.locks.acquire(r, { leaseMs: 300 });
    await sleep(450);
    const hb = await b.locks.acquire(r, { leaseMs: 5_000, waitMs: 0 });
    expect(ha.isHeld()).toBe(false);
    expect(ha.signal.reason).toBeInstanceOf(LockLostError);
    expect(ha.signal.reason.reason).toBe("expired");
    expect(await ha.renew()).toBe(false);
    expect(await ha.release()).toBe("not-owner");
    expect(await row(pool, r)).toMatchObject({ owner: hb.owner, count: 1, live: true });
    expect(hb.token!).toBeGreaterThan(ha.token!);
    expect(await hb.release()).toBe("released");
    await Promise.all([a.locks.close(), b.locks.close()]);
  });

  it("a watchdog holder frozen past its lease loses it (deadline); the next owner takes it; the old release is refused", async () => {
    const a = makePgLocks(pool, { leaseMs: 300 });
    const b = makePgLocks(pool);
    const r = uniq("frozen");
    const ha = await a.locks.acquire(r);
    freeze(500);
    // The watchdog's overdue tick runs first and sees the deadline passed.
    await sleep(20);
    expect(ha.signal.aborted).toBe(true);
    expect(ha.signal.reason.reason).toBe("deadline");
    expect(a.events.some((e) => e.type === "lost" && e.reason === "deadline")).toBe(true);
    const hb = await b.locks.acquire(r, { leaseMs: 5_000, waitMs: 1_000 });
    expect(await ha.release()).toBe("not-owner");
    expect((await row(pool, r))?.owner).toBe(hb.owner);
    await hb.release();
    await Promise.all([a.locks.close(), b.locks.close()]);
  });

  it("with no explicit lease the watchdog keeps the lock for 4x the lease, renewing both locks in one statement", async () => {
    const own = await pgPool(2);
    const names: string[] = [];
    const query = own.query.bind(own);
    own.query = ((q: unknown, ...rest: unknown[]) => {
      if (typeof q === "object" && q !== null && "name" in q) names.push(String(q.name));
      return (query as (...a: unknown[]) => unknown)(q, ...rest);
    }) as typeof own.query;
    const { locks, events } = makePgLocks(own, { leaseMs: 450 });
    const other = makePgLocks(pool).locks;
    const r1 = uniq("wd");
    const r2 = uniq("wd");
    const [h1, h2] = await Promise.all([locks.acquire(r1), locks.acquire(r2)]);
    const t0 = performance.now();
    while (performance.now() - t0 < 1_800) {
      expect(await other.tryAcquire(r1)).toBeNull();
      expect((await row(pool, r2))?.live).toBe(true);
      await sleep(100);
    }
    expect(h1.isHeld() && h2.isHeld()).toBe(true);
    const renewed = events.filter((e) => e.type === "renewed").length;
    expect(renewed).toBeGreaterThanOrEqual(6);
    const batches = names.filter((n) => n.endsWith(".renewMany")).length;
    // Both handles ride in one statement (a slow start may renew them apart once before they align).
    expect(batches).toBeLessThanOrEqual(renewed / 2 + 1);
    expect(names.some((n) => n.endsWith(".renew"))).toBe(false);
    expect(await h1.release()).toBe("released");
    expect(await h2.release()).toBe("released");
    await Promise.all([locks.close(), other.close()]);
    await own.end();
  });

  it("the row taken from outside: the next renewal is refused, the signal aborts, withLock rejects after its callback", async () => {
    const { locks, events } = makePgLocks(pool, { leaseMs: 300 });
    const r = uniq("stolen");
    let finished = false;
    const err = await locks
      .withLock(r, async (lock) => {
        await pool.query(`UPDATE ${TABLE} SET owner = 'thief', count = 1 WHERE resource = $1`, [r]);
        await new Promise((res) => lock.signal.addEventListener("abort", res));
        finished = true;
      })
      .catch((e: unknown) => e);
    expect(finished).toBe(true);
    expect(err).toBeInstanceOf(LockLostError);
    expect((err as LockLostError).reason).toBe("renew-refused");
    expect(events.some((e) => e.type === "lost" && e.reason === "renew-refused")).toBe(true);
    // The thief's row was left alone by the refused release.
    expect(await row(pool, r)).toMatchObject({ owner: "thief", live: true });
    await locks.close();
  });

  it("a fixed lease is not renewed: the row expires on time and anyone may take it", async () => {
    const { locks, events } = makePgLocks(pool);
    const r = uniq("fixed");
    const h = await locks.acquire(r, { leaseMs: 250 });
    await sleep(400);
    expect(events.some((e) => e.type === "renewed")).toBe(false);
    expect((await row(pool, r))?.live).toBe(false);
    expect(h.isHeld()).toBe(false);
    const again = await locks.tryAcquire(r);
    expect(again).not.toBeNull();
    await again!.release();
    await locks.close();
  });
});
