import type { AcquireOptions, LockHandle, Locks } from "@lockyard/lock";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext, uid } from "../../test/context.js";
import { fencedStockWrite } from "../stock/fenced.js";
import { stockKey } from "../stock/keys.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext({ withPostgres: true });
});
afterAll(() => t.close());

/**
 * Hold intervals as the holder sees them: from the moment acquire() hands over the lock to the moment
 * release() is called. Lock events would not do here: the release's reply and the next owner's grant come
 * back on different pool connections, so the next "acquired" can be seen a moment before "released".
 */
function recordHolds(locks: Locks) {
  const holds: { start: number; end: number }[] = [];
  const original = locks.acquire;
  // The stock path takes one product's lock at a time: the single-resource form is the one to record.
  const acquire = locks.acquire.bind(locks) as (
    resource: string,
    opts?: AcquireOptions,
  ) => Promise<LockHandle>;
  locks.acquire = (async (resource: string, opts?: AcquireOptions) => {
    const handle = await acquire(resource, opts);
    const hold = { start: performance.now(), end: Number.POSITIVE_INFINITY };
    holds.push(hold);
    const release = handle.release.bind(handle);
    handle.release = () => {
      hold.end = performance.now();
      return release();
    };
    return handle;
  }) as Locks["acquire"];
  return {
    inStartOrder: () => [...holds].sort((a, b) => a.start - b.start),
    stop: () => {
      locks.acquire = original;
    },
  };
}

describe("stock.deduct in postgres mode (real PostgreSQL)", () => {
  it("serialises holders (no overlapping holds), never oversells and fences in its own field", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 10 });
    const recorder = recordHolds(t.ctx.postgres!.locks);
    const results = await Promise.all(
      Array.from({ length: 25 }, () => t.caller.stock.deduct({ productId, mode: "postgres", workMs: 5 })),
    ).finally(recorder.stop);
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    expect(results.filter((r) => !r.ok && r.reason === "sold-out")).toHaveLength(15);
    expect((await t.caller.stock.get({ productId })).qty).toBe(0);

    const hs = recorder.inStartOrder();
    expect(hs).toHaveLength(25);
    for (let i = 1; i < hs.length; i++) expect(hs[i]!.start).toBeGreaterThanOrEqual(hs[i - 1]!.end);

    // PostgreSQL's tokens go to `pgFence`; the Redis counter's field is left alone.
    const tokens = results.flatMap((r) => (r.ok && r.token !== null ? [r.token] : []));
    expect(tokens).toHaveLength(10);
    const [pgFence, fence] = await t.redis.hmget(stockKey(productId), "pgFence", "fence");
    expect(Number(pgFence)).toBe(Math.max(...tokens));
    expect(fence).toBeNull();
  });

  it("redis and postgres modes take turns on one product without refusing each other's writes", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 6 });
    const modes = ["redis", "postgres", "redis", "postgres", "redis", "postgres"] as const;
    const results = [];
    for (const mode of modes) results.push(await t.caller.stock.deduct({ productId, mode }));
    expect(results.map((r) => (r.ok ? r.stock : r.reason))).toEqual([5, 4, 3, 2, 1, 0]);
  });

  it("refuses a PostgreSQL token older than the last one written (stale-token)", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 5 });
    expect(await fencedStockWrite(t.redis, productId, 7, -1, "pgFence")).toEqual({ ok: true, qty: 4 });
    expect(await fencedStockWrite(t.redis, productId, 6, -1, "pgFence")).toEqual({
      ok: false,
      reason: "stale",
      fence: 7,
    });
    expect(await fencedStockWrite(t.redis, productId, 7, -1, "pgFence")).toEqual({ ok: true, qty: 3 });
    expect((await t.caller.stock.get({ productId })).fence).toBe(0);
  });

  it("a pgFence ahead of the lock table's sequence (a new database) is raised past at start, not refused forever", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 2 });
    const pool = t.ctx.postgres!.pool;
    const sequence = async () =>
      Number((await pool.query("SELECT last_value FROM lockyard_locks_fence")).rows[0].last_value);
    const ahead = (await sequence()) + 1_000;
    await t.redis.hset(stockKey(productId), "pgFence", ahead);
    // What a sequence that starts again meets: every write refused as stale.
    expect(await t.caller.stock.deduct({ productId, mode: "postgres" })).toMatchObject({
      ok: false,
      reason: "stale-token",
    });
    // An instance that starts now raises the sequence past the highest pgFence before it takes locks.
    const restarted = await testContext({ withPostgres: true, pgFenceFloor: true });
    try {
      expect(await sequence()).toBeGreaterThanOrEqual(ahead);
      const r = await restarted.caller.stock.deduct({ productId, mode: "postgres" });
      expect(r).toMatchObject({ ok: true, stock: 1 });
      expect(r.ok ? r.token : 0).toBeGreaterThan(ahead);
    } finally {
      await restarted.close();
    }
  });

  it("system.info reports the mode available with the server's version", async () => {
    const info = await t.caller.system.info();
    expect(info.postgres).toMatchObject({ available: true, reason: null });
    expect(info.postgres.version).toMatch(/^\d+/);
    expect(info.modes.find((m) => m.mode === "postgres")).toEqual({
      mode: "postgres",
      available: true,
      reason: null,
    });
  });

  it("without DATABASE_URL the mode is unavailable with the reason, and deducts say so", async () => {
    const plain = await testContext();
    try {
      const info = await plain.caller.system.info();
      expect(info.modes.find((m) => m.mode === "postgres")).toEqual({
        mode: "postgres",
        available: false,
        reason: "DATABASE_URL is not set",
      });
      const err = await plain.caller.stock.deduct({ productId: uid("p"), mode: "postgres" }).catch((e) => e);
      expect(err).toBeInstanceOf(TRPCError);
      expect((err as TRPCError).code).toBe("PRECONDITION_FAILED");
      expect((err as TRPCError).message).toMatch(/DATABASE_URL is not set/);
      // Every other mode still works.
      const productId = uid("p");
      await plain.caller.stock.reset({ productId, qty: 1 });
      expect(await plain.caller.stock.deduct({ productId, mode: "redis" })).toMatchObject({ ok: true });
    } finally {
      await plain.close();
    }
  });
});

describe("locks.list across stores", () => {
  it("shows PostgreSQL locks beside Redis locks, each labelled with its store, and keeps same-named ones apart", async () => {
    const resource = `test:${uid("both")}`;
    const pgLocks = t.ctx.postgres!.locks;
    await t.locks.withLock(resource, async (r) => {
      await pgLocks.withLock(resource, async (p) => {
        const { locks } = await t.caller.locks.list({ prefix: resource });
        expect(locks.map((l) => l.store)).toEqual(["postgres", "redis"]);
        const byStore = new Map(locks.map((l) => [l.store, l]));
        expect(byStore.get("redis")!.owners[0]!.owner).toBe(r.owner);
        expect(byStore.get("postgres")!.owners[0]!.owner).toBe(p.owner);
        expect(byStore.get("postgres")!.token).toBe(p.token);
      });
    });
    expect((await t.caller.locks.list({ prefix: resource })).locks).toHaveLength(0);
  });
});
