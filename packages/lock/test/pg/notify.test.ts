import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { startReplyCutter } from "../../../../scripts/lib/reply-cutter.mjs";
import type { LockHandle, Locks } from "../../src/index.js";
import { PG_CHANNEL, type PgLocksOptions } from "../../src/pg.js";
import { sleep, uniq } from "../helpers.js";
import { makePgLocks, pgPool, pgPoolThrough } from "../pg-helpers.js";

let pool: pg.Pool;
let spy: pg.Client;
const heard: string[] = [];
beforeAll(async () => {
  pool = await pgPool();
  spy = new pg.Client({ connectionString: inject("pgUrl") });
  await spy.connect();
  spy.on("notification", (m) => heard.push(m.payload ?? ""));
  await spy.query(`LISTEN ${PG_CHANNEL}`);
});
afterAll(async () => {
  await spy.end();
  await pool.end();
});

// Every Locks a test made is closed after it, passed or failed: one left open keeps its LISTEN session and pool
// connections, which a later test would count as its own and the pool's end would wait for.
const opened: Locks[] = [];
function locksOn(p: pg.Pool, opts: Partial<PgLocksOptions> = {}) {
  const made = makePgLocks(p, opts);
  opened.push(made.locks);
  return made;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close().catch(() => {})));
});

/** The LISTEN sessions of the pool named `applicationName`. */
async function listenSessions(applicationName: string): Promise<number> {
  const { rows } = await pool.query(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1 AND application_name = $2",
    [`LISTEN ${PG_CHANNEL}`, applicationName],
  );
  return rows[0].n as number;
}

// Fallback retries every 10 s at most: a wake-up within a second can only be the NOTIFY.
const patient = { retry: { maxMs: 10_000, minMs: 10_000 }, waitMs: 5_000 };

/**
 * A pool named `applicationName` on which the backend cannot get its LISTEN connection: the listener checks it out
 * with pool.connect(), statements go through pool.query; the former is refused as a server at max_connections does.
 */
async function poolWithoutListen(applicationName: string): Promise<pg.Pool> {
  const own = await pgPool(4, applicationName);
  const connect = own.connect.bind(own) as (cb: unknown) => void;
  const refuse = (cb?: unknown) =>
    cb === undefined
      ? Promise.reject(Object.assign(new Error("sorry, too many clients already"), { code: "53300" }))
      : connect(cb);
  own.connect = refuse as unknown as typeof own.connect;
  return own;
}

/** Runs `fn` on a pool without LISTEN (poolWithoutListen); the Locks it made are closed and the pool ended after. */
async function withoutListen(applicationName: string, fn: (own: pg.Pool) => Promise<void>): Promise<void> {
  const own = await poolWithoutListen(applicationName);
  try {
    await fn(own);
  } finally {
    await Promise.all(opened.splice(0).map((l) => l.close().catch(() => {})));
    await own.end();
  }
}

/** An acquire's handle, or the name of the error it failed with. */
const heldOrName = (p: Promise<LockHandle>) =>
  p.then(
    (h) => h,
    (e: unknown) => (e as Error).name,
  );

/** The waiter got the lock (rather than LockTimeoutError: slept to its fallback look); releases it. */
async function expectHeld(got: LockHandle | string): Promise<void> {
  expect(typeof got === "string" ? got : "held").toBe("held");
  if (typeof got !== "string") await got.release();
}

describe("PostgreSQL backend: LISTEN/NOTIFY", () => {
  it("NOTIFY wakes a waiter of another Locks instance long before its fallback timer", async () => {
    const name = uniq("wake-b");
    const own = await pgPool(4, name);
    const a = locksOn(pool);
    const b = locksOn(own, patient);
    const r = uniq("wake");
    const ha = await a.locks.acquire(r);
    const waiting = b.locks.acquire(r);
    // Released only once the waiter listens and has looked again (right after LISTEN): else that look, not the
    // NOTIFY, would take the lock. A fixed sleep was too short on a loaded machine (CI, 2026-12-03).
    await vi.waitFor(async () => expect(await listenSessions(name)).toBe(1), {
      timeout: 5_000,
      interval: 20,
    });
    await sleep(200);
    const releasedAt = performance.now();
    expect(await ha.release()).toBe("released");
    const hb = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(1_000);
    // The first try, the look after subscribing, the one after the NOTIFY.
    expect(b.events.find((e) => e.type === "acquired")).toMatchObject({ attempts: 3 });
    expect(heard).toContain(r);
    await hb.release();
    await Promise.all([a.locks.close(), b.locks.close()]);
    await own.end();
  });

  it("an uncontended release notifies nobody; a contended one notifies once", async () => {
    const { locks } = locksOn(pool);
    const other = locksOn(pool, patient).locks;
    const r = uniq("quiet");
    await (await locks.acquire(r)).release();
    const h = await locks.acquire(r);
    await h.release();
    await sleep(100);
    expect(heard.filter((x) => x === r)).toHaveLength(0);
    const h2 = await locks.acquire(r);
    const waiting = other.acquire(r);
    await sleep(200);
    await h2.release();
    await (await waiting).release();
    await sleep(100);
    expect(heard.filter((x) => x === r)).toHaveLength(1);
    await Promise.all([locks.close(), other.close()]);
  });

  it("one LISTEN connection per Locks, given back to the pool on close", async () => {
    const name = uniq("one-listen");
    const own = await pgPool(3, name);
    const { locks } = locksOn(own, patient);
    const holder = locksOn(pool).locks;
    const rs = [uniq("one"), uniq("one"), uniq("one")];
    const held = await Promise.all(rs.map((r) => holder.acquire(r)));
    const waits = rs.flatMap((r) => [locks.acquire(r), locks.acquire(r)]);
    await sleep(300);
    const listening = () => listenSessions(name);
    expect(await listening()).toBe(1);
    await Promise.all(held.map((h) => h.release()));
    for (const w of waits) await (await w).release();
    await locks.close();
    await holder.close();
    expect(own.totalCount - own.idleCount).toBe(0);
    expect(await listening()).toBe(0);
    await own.end();
  });

  it("the LISTEN connection killed: it is re-made and the waiter still wakes on release", async () => {
    const name = uniq("relisten-b");
    const own = await pgPool(4, name);
    const a = locksOn(pool);
    const b = locksOn(own, patient);
    const r = uniq("relisten");
    const ha = await a.locks.acquire(r);
    const waiting = b.locks.acquire(r);
    await sleep(200);
    const { rows } = await pool.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1 AND application_name = $2",
      [`LISTEN ${PG_CHANNEL}`, name],
    );
    expect(rows).toHaveLength(1);
    await sleep(1_000);
    const releasedAt = performance.now();
    await ha.release();
    const hb = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(1_000);
    await hb.release();
    await Promise.all([a.locks.close(), b.locks.close()]);
    await own.end();
  });

  for (const when of ["before-server", "after-server"] as const) {
    it(`the LISTEN connection killed while LISTEN is on its way (${when}): the waiter still wakes on release`, async () => {
      const cutter = await startReplyCutter(inject("pgUrl"));
      const through = await pgPoolThrough(cutter);
      const a = locksOn(pool);
      const b = locksOn(through, patient);
      const r = uniq("listen-cut");
      try {
        const ha = await a.locks.acquire(r);
        // Only the LISTEN statement matches ("UNLISTEN" is sent on close, after the cut is used up).
        const killed = cutter.cutOnce(`LISTEN ${PG_CHANNEL}`, when);
        const waiting = b.locks.acquire(r);
        expect(await killed).toBe(true);
        await sleep(1_000);
        const releasedAt = performance.now();
        expect(await ha.release()).toBe("released");
        const hb = await waiting;
        // Its timed looks come every 10 s: within a second, only a NOTIFY on a LISTEN made again woke it.
        expect(performance.now() - releasedAt).toBeLessThan(1_000);
        await hb.release();
      } finally {
        await Promise.all([a.locks.close(), b.locks.close()]);
        await through.end();
        await cutter.close();
      }
    });
  }

  // Found by the bench: in one round of (c) the LISTEN connection was not to be had, and only the NOTIFY woke
  // this process's next waiter after its own release, so each of 200 local handoffs waited for a fallback look
  // and 189 of them timed out.
  it("without a LISTEN connection, a release wakes the next waiter of its own Locks at once", async () => {
    const name = uniq("no-listen");
    await withoutListen(name, async (own) => {
      const { locks } = locksOn(own, patient);
      const r = uniq("no-listen");
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const h = await locks.acquire(r);
          await sleep(5);
          await h.release();
          return "held";
        }).map((p) => p.catch((e: unknown) => (e as Error).name)),
      );
      // Without the wake, the second waiter slept until its fallback look (10 s), past waitMs.
      expect(outcomes).toEqual(["held", "held", "held", "held", "held"]);
      expect(await listenSessions(name)).toBe(0);
    });
  });

  it("without a LISTEN connection, the give-back of a grant its caller gave up on wakes the next waiter at once", async () => {
    await withoutListen(uniq("no-listen-orphan"), async (own) => {
      const late = uniq("late-owner");
      // The answer to `late`'s acquire statements comes 300 ms after PostgreSQL ran them.
      const query = own.query.bind(own) as (config: {
        name?: string;
        values?: unknown[];
      }) => Promise<unknown>;
      own.query = ((config: { name?: string; values?: unknown[] }) => {
        const answer = query(config);
        if (!config.name?.endsWith(".acquire") || config.values?.[1] !== late) return answer;
        return answer.then(async (r) => {
          await sleep(300);
          return r;
        });
      }) as unknown as typeof own.query;
      const other = locksOn(pool);
      const { locks } = locksOn(own, patient);
      const r = uniq("orphan");
      const held = await other.locks.acquire(r);
      // Refused, and so is its subscription (and the look that follows the first such refusal): it sleeps until its
      // fallback look, 10 s away, past its waitMs, unless something wakes it.
      const waiting = heldOrName(locks.acquire(r));
      await sleep(300);
      await held.release(); // unheard in `locks`: no LISTEN
      // An explicit owner tries at once, beside the queue: PostgreSQL grants it, the answer is on its way when
      // its caller gives up. The waiter, woken by that give-up, is refused (the grant holds) and sleeps again.
      const ac = new AbortController();
      const givingUp = heldOrName(locks.acquire(r, { owner: late, signal: ac.signal }));
      await sleep(100);
      ac.abort();
      expect(await givingUp).toBe("AbortError");
      // The answer comes, and the core gives back the grant nobody wants: that must wake the waiter.
      await expectHeld(await waiting);
    });
  });

  it("without a LISTEN connection, a release retried in the background wakes the next waiter once it frees the lock", async () => {
    await withoutListen(uniq("no-listen-late"), async (own) => {
      // The first release statement never reaches the server, as when its connection is cut as it is sent.
      let cut = 1;
      const query = own.query.bind(own) as (config: { name?: string }) => Promise<unknown>;
      own.query = ((config: { name?: string }) => {
        if (config.name?.endsWith(".release") && cut-- > 0)
          return Promise.reject(
            Object.assign(new Error("Connection terminated unexpectedly"), { code: "ECONNRESET" }),
          );
        return query(config);
      }) as unknown as typeof own.query;
      // Lease 3 s: the background retry comes every 200 ms at most (lease / 10).
      const { locks } = locksOn(own, { ...patient, leaseMs: 3_000 });
      const r = uniq("late");
      const held = await locks.acquire(r);
      // Refused, and so is its subscription: it sleeps until its fallback look, 10 s away, past its waitMs.
      const waiting = heldOrName(locks.acquire(r));
      await sleep(300);
      await expect(held.release()).rejects.toThrow(/Connection terminated/);
      // The retry frees the lock: that must wake the waiter.
      await expectHeld(await waiting);
    });
  });
});
