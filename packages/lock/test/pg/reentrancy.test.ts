import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniq } from "../helpers.js";
import { makePgLocks, pgPool, row } from "../pg-helpers.js";

let pool: pg.Pool;
beforeAll(async () => {
  pool = await pgPool();
});
afterAll(async () => {
  await pool.end();
});

describe("PostgreSQL backend: re-entry", () => {
  it("an explicit owner re-enters: counts 1, 2, 3, same token; release counts down; freed only at 0", async () => {
    const { locks } = makePgLocks(pool, { leaseMs: 5_000 });
    const other = makePgLocks(pool).locks;
    const r = uniq("reenter");
    const h1 = await locks.acquire(r);
    const h2 = await locks.acquire(r, { owner: h1.owner });
    const h3 = await locks.acquire(r, { owner: h1.owner, leaseMs: 300 });
    expect([h1.count, h2.count, h3.count]).toEqual([1, 2, 3]);
    expect(h2.token).toBe(h1.token);
    expect(h3.token).toBe(h1.token);
    expect(await row(pool, r)).toMatchObject({ owner: h1.owner, count: 3, live: true });
    expect(await other.tryAcquire(r)).toBeNull();
    expect(await h3.release()).toBe("decremented");
    expect(await h2.release()).toBe("decremented");
    expect(await row(pool, r)).toMatchObject({ owner: h1.owner, count: 1, live: true });
    expect(await other.tryAcquire(r)).toBeNull();
    expect(await h1.release()).toBe("released");
    expect(await row(pool, r)).toMatchObject({ owner: null, count: 0, live: false });
    const h4 = await other.tryAcquire(r);
    expect(h4?.count).toBe(1);
    expect(h4!.token!).toBeGreaterThan(h1.token!);
    await h4!.release();
    await Promise.all([locks.close(), other.close()]);
  });

  it("a re-entry with a short lease never shortens the row's expiry", async () => {
    const { locks } = makePgLocks(pool);
    const r = uniq("noshorten");
    const h1 = await locks.acquire(r, { leaseMs: 5_000 });
    const h2 = await locks.acquire(r, { owner: h1.owner, leaseMs: 50 });
    await new Promise((res) => setTimeout(res, 200));
    expect(await row(pool, r)).toMatchObject({ owner: h1.owner, count: 2, live: true });
    await h2.release();
    await h1.release();
    await locks.close();
  });

  it("nested withLock re-enters through the scope; another resource does not inherit the owner", async () => {
    const { locks } = makePgLocks(pool, { leaseMs: 2_000 });
    const r = uniq("scope");
    const other = uniq("scope-other");
    const seen = await locks.withLock(r, async (outer) =>
      locks.withLock(r, async (inner) => {
        const stored = await row(pool, r);
        const h = await locks.acquire(other);
        const differs = h.owner !== outer.owner;
        await h.release();
        return { outer, inner, stored, differs };
      }),
    );
    expect(seen.inner.owner).toBe(seen.outer.owner);
    expect(seen.inner.token).toBe(seen.outer.token);
    expect(seen.inner.count).toBe(2);
    expect(seen.stored?.count).toBe(2);
    expect(seen.differs).toBe(true);
    expect((await row(pool, r))?.live).toBe(false);
    await locks.close();
  });

  it("an owner whose lease ran out does not re-enter: it acquires afresh (count 1, new token)", async () => {
    const { locks } = makePgLocks(pool);
    const r = uniq("stale-reenter");
    const h1 = await locks.acquire(r, { leaseMs: 100 });
    await new Promise((res) => setTimeout(res, 200));
    const h2 = await locks.acquire(r, { owner: h1.owner, leaseMs: 1_000 });
    expect(h2.count).toBe(1);
    expect(h2.token!).toBeGreaterThan(h1.token!);
    expect(await h2.release()).toBe("released");
    await locks.close();
  });
});
