// A statement the server refuses without running it: a lock timeout (55P03), a cancel or statement timeout
// (57014), a serialization failure or deadlock (40001, 40P01). A release refused so was left to the lease (the
// handle already said released, so the caller could not send it again): every waiter waited the lease out.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LockTimeoutError } from "../../src/index.js";
import { isPgUnavailable } from "../../src/pg.js";
import { uniq } from "../helpers.js";
import { makePgLocks, pgPool, row, TABLE } from "../pg-helpers.js";

const LEASE_MS = 10_000;
const REPEATABLE_READ = "-c default_transaction_isolation=repeatable\\ read";

let direct: pg.Pool;
let impatient: pg.Pool;
beforeAll(async () => {
  direct = await pgPool();
  // Sessions that give up waiting for a row lock after 100 ms, as a server or role setting can make them.
  impatient = new pg.Pool({ connectionString: inject("pgUrl"), max: 2, options: "-c lock_timeout=100" });
  impatient.on("error", () => {});
});
afterAll(async () => {
  await impatient.end();
  await direct.end();
});

describe("PostgreSQL backend: a statement the server refused without running it", () => {
  it("counts 55P03, 57014, 40001 and 40P01 as not run", () => {
    for (const code of ["55P03", "57014", "40001", "40P01"])
      expect(isPgUnavailable(Object.assign(new Error("refused"), { code })), code).toBe(true);
    expect(isPgUnavailable(Object.assign(new Error("no such table"), { code: "42P01" }))).toBe(false);
  });

  it("a release refused on a lock timeout is retried: the lock is free long before its lease ends", async () => {
    const { locks } = makePgLocks(impatient, { leaseMs: LEASE_MS });
    const { locks: other } = makePgLocks(direct, { leaseMs: LEASE_MS });
    const res = uniq("pg-refused-release");
    const mine = await locks.acquire(res, { leaseMs: LEASE_MS });
    // Another session holds the lock's row: the release waits for it, and gives up after 100 ms.
    const blocker = await direct.connect();
    await blocker.query("BEGIN");
    await blocker.query(`SELECT 1 FROM ${TABLE} WHERE resource = $1 FOR UPDATE`, [res]);
    const refused = await mine.release().catch((e: unknown) => e);
    expect((refused as { code?: string }).code).toBe("55P03");
    await blocker.query("COMMIT");
    blocker.release();
    const next = await other.acquire(res, { waitMs: 3_000 });
    expect(next.isHeld()).toBe(true);
    await next.release();
    await locks.close();
    await other.close();
  });

  /** Another session locks the lock's row (made by a first hold) until `COMMIT`: every statement on it waits. */
  async function rowLocked(res: string) {
    const { locks: maker } = makePgLocks(direct, { leaseMs: LEASE_MS });
    await (await maker.acquire(res)).release();
    await maker.close();
    const blocker = await direct.connect();
    await blocker.query("BEGIN");
    await blocker.query(`SELECT 1 FROM ${TABLE} WHERE resource = $1 FOR UPDATE`, [res]);
    return {
      async commit() {
        await blocker.query("COMMIT");
        blocker.release();
      },
    };
  }

  it("an acquire refused on a lock timeout tries again within waitMs, and keeps what it then gets", async () => {
    // Quick looks: several refused attempts, the last just before the row is free, so a background release
    // sent for any of them (it would be owner-checked against this same owner) would still be due after the grant.
    const { locks } = makePgLocks(impatient, { leaseMs: LEASE_MS, retry: { maxMs: 20, jitterMs: 10 } });
    const res = uniq("pg-refused-acquire");
    const blocker = await rowLocked(res);
    let settled = false;
    const pending = locks.acquire(res, { waitMs: 10_000 }).finally(() => {
      settled = true;
    });
    pending.catch(() => {});
    // Several 100 ms lock timeouts pass: each used to reject the acquire with 55P03.
    await new Promise((r) => setTimeout(r, 700));
    expect(settled).toBe(false);
    await blocker.commit();
    const h = await pending;
    expect(h.isHeld()).toBe(true);
    // Nothing was released for the refused attempts: a background release of their owner would free this hold.
    await new Promise((r) => setTimeout(r, 600));
    expect((await row(direct, res))?.owner).toBe(h.owner);
    expect(h.isHeld()).toBe(true);
    await h.release();
    await locks.close();
  });

  it("a wait that ends while refused says so: LockTimeoutError with pg's error as its cause", async () => {
    const { locks } = makePgLocks(impatient, { leaseMs: LEASE_MS });
    const res = uniq("pg-refused-timeout");
    const blocker = await rowLocked(res);
    const err = await locks.acquire(res, { waitMs: 800 }).catch((e: unknown) => e);
    await blocker.commit();
    expect(err).toBeInstanceOf(LockTimeoutError);
    const timeout = err as LockTimeoutError;
    expect(timeout.attempts).toBeGreaterThanOrEqual(2);
    expect((timeout.cause as { code?: string }).code).toBe("55P03");
    expect(timeout.message).toMatch(/refused the last attempt without running it: .*\(55P03\)/);
    // tryAcquire has no wait to retry in: it rejects with pg's error, as before.
    const again = await rowLocked(res);
    const tried = await locks.tryAcquire(res).catch((e: unknown) => e);
    await again.commit();
    expect((tried as { code?: string }).code).toBe("55P03");
    await locks.close();
  });

  it("under repeatable read, contended acquires of several Locks are refused with 40001 and all get in", async () => {
    // Each Locks sends one attempt at a time; across them, an attempt that finds the row changed since its
    // snapshot is refused with a serialization failure. These rejected at once (4 of 12, by hand).
    const rr = new pg.Pool({
      connectionString: inject("pgUrl"),
      max: 6,
      options: REPEATABLE_READ,
    });
    rr.on("error", () => {});
    const all = [0, 1, 2, 3].map(() => makePgLocks(rr, { leaseMs: LEASE_MS }).locks);
    const res = uniq("pg-refused-rr");
    let inside = 0;
    let mostInside = 0;
    const failures: unknown[] = [];
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        try {
          const h = await all[i % all.length]!.acquire(res, { waitMs: 8_000 });
          mostInside = Math.max(mostInside, ++inside);
          await new Promise((r) => setTimeout(r, 10));
          inside--;
          await h.release();
        } catch (err) {
          failures.push(err);
        }
      }),
    );
    for (const locks of all) await locks.close();
    await rr.end();
    expect(failures.map((e) => `${String(e)} (${(e as { code?: string }).code})`)).toEqual([]);
    expect(mostInside).toBe(1);
  });

  /**
   * Another session changes the lock's row (a waiter marking it, as an acquire does) in a transaction that
   * commits once a statement of `pool`'s is waiting for that row: under REPEATABLE READ that statement's
   * snapshot predates the change, so the server refuses it with 40001.
   */
  async function changeRowUnder(res: string) {
    const blocker = await direct.connect();
    await blocker.query("BEGIN");
    await blocker.query(`UPDATE ${TABLE} SET waiters = true WHERE resource = $1`, [res]);
    const pid = (await blocker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    return {
      async commitOnceBlocking() {
        for (;;) {
          const { rowCount } = await direct.query(
            "SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
            [pid],
          );
          if (rowCount) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        await blocker.query("COMMIT");
        blocker.release();
      },
    };
  }

  it("under repeatable read, a release refused with a serialization failure is sent again: it frees the lock", async () => {
    // Before, the release rejected with 40001 (the caller saw an error for a lock it held) and was retried in the background.
    const rr = new pg.Pool({ connectionString: inject("pgUrl"), max: 2, options: REPEATABLE_READ });
    rr.on("error", () => {});
    const { locks } = makePgLocks(rr, { leaseMs: LEASE_MS });
    const res = uniq("pg-refused-rr-release");
    const h = await locks.acquire(res);
    const change = await changeRowUnder(res);
    const released = h.release().catch((e: unknown) => e);
    await change.commitOnceBlocking();
    expect(await released).toBe("released");
    expect((await row(direct, res))?.owner).toBeNull();
    await locks.close();
    await rr.end();
  });

  it("under repeatable read, a tryAcquire refused with a serialization failure is sent again: it gets the free lock", async () => {
    // Before, tryAcquire rejected with 40001 though the lock was free.
    const rr = new pg.Pool({ connectionString: inject("pgUrl"), max: 2, options: REPEATABLE_READ });
    rr.on("error", () => {});
    const { locks } = makePgLocks(rr, { leaseMs: LEASE_MS });
    const res = uniq("pg-refused-rr-try");
    await (await locks.acquire(res)).release();
    const change = await changeRowUnder(res);
    const tried = locks.tryAcquire(res).catch((e: unknown) => e);
    await change.commitOnceBlocking();
    const h = await tried;
    expect((h as { isHeld?: () => boolean }).isHeld?.()).toBe(true);
    await (h as { release: () => Promise<unknown> }).release();
    await locks.close();
    await rr.end();
  });
});
