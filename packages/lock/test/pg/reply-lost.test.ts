// A connection to PostgreSQL cut while a statement is on its way: after the server committed it (the reply is
// lost) or before the server read it. pg never sends a statement twice, so the call fails; without knowing
// that such a failure is "no answer", the core left a grant nobody heard, and a release that never ran, to
// their leases: every waiter waited the lease out.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { type ReplyCutter, startReplyCutter } from "../../../../scripts/lib/reply-cutter.mjs";
import type { Locks } from "../../src/index.js";
import { isPgUnavailable } from "../../src/pg.js";
import { sleep, uniq } from "../helpers.js";
import { makePgLocks, pgPool, pgPoolThrough, row, TABLE } from "../pg-helpers.js";

const LEASE_MS = 10_000;
/** Well inside the lease: only a release before the lease ends lets the other owner in by then. */
const WAIT_MS = 5_000;

let direct: pg.Pool;
beforeAll(async () => {
  direct = await pgPool();
});
afterAll(async () => {
  await direct.end();
});

describe("PostgreSQL backend: a statement whose connection is cut", () => {
  it("an acquire that committed but whose reply was lost is released in the background, long before its lease ends", async () => {
    await throughCutter(async ({ cutter, locks, res }) => {
      cutter.holdReplies();
      const acquired = locks.acquire(res).catch((e: unknown) => e);
      // It ran and committed: the row is held, by an owner whose reply never comes.
      await vi.waitFor(async () => expect((await row(direct, res))?.live).toBe(true));
      cutter.cut();
      expect(isPgUnavailable(await acquired)).toBe(true);
    });
  });

  it("a release that never reached the server is retried once it is reachable: the lock is free long before its lease ends", async () => {
    await throughCutter(async ({ cutter, locks, res }) => {
      const mine = await locks.acquire(res, { leaseMs: LEASE_MS }); // fixed: no watchdog
      cutter.dropRequests();
      const released = mine.release().catch((e: unknown) => e);
      await sleep(100);
      expect((await row(direct, res))?.live).toBe(true); // it never ran
      cutter.cut();
      expect(isPgUnavailable(await released)).toBe(true);
    });
  });

  // Found by a black-box chaos probe (two holders for 155 ms): the release statement matched resource and owner
  // only, so the background retry of an old hold's release freed a newer grant to the same owner name.
  it("a release whose reply was lost, retried in the background, does not free a newer grant to the same owner: no second holder", async () => {
    await withCutter(async ({ cutter, locks, theirs, res }) => {
      const first = await locks.acquire(res);
      // The release runs and commits; its reply never comes back.
      cutter.holdReplies();
      const released = first.release().catch((e: unknown) => e);
      await vi.waitFor(async () => expect((await row(direct, res))?.live).toBe(false));
      cutter.cut();
      expect(isPgUnavailable(await released)).toBe(true);
      // The same owner name takes the lock afresh before the background retry of the old release goes out.
      const again = await locks.acquire(res, { owner: first.owner, waitMs: WAIT_MS });
      expect(again.token).toBeGreaterThan(first.token!);
      // Well past the retry's gap: a retry that matched owner alone would have freed the new grant by now.
      await sleep(600);
      expect((await row(direct, res))?.live, "the new grant was freed").toBe(true);
      expect(again.isHeld()).toBe(true);
      expect(await theirs.tryAcquire(res), "a second holder").toBeNull();
      await again.release();
    });
  });

  it("isPgUnavailable: no answer is unavailable; a SQL error is the server's answer", async () => {
    const refused = new pg.Pool({ connectionString: "postgres://nobody@127.0.0.1:1/none" });
    const noServer = await refused.query("SELECT 1").catch((e: unknown) => e);
    await refused.end();
    expect(isPgUnavailable(noServer)).toBe(true);
    const sqlError = await direct.query(`SELECT nope FROM ${TABLE}`).catch((e: unknown) => e);
    expect(isPgUnavailable(sqlError)).toBe(false);
    expect(
      isPgUnavailable(new Error("boom", { cause: new Error("Connection terminated unexpectedly") })),
    ).toBe(true);
    expect(isPgUnavailable(Object.assign(new Error("terminating connection"), { code: "57P01" }))).toBe(true);
    expect(isPgUnavailable(undefined)).toBe(false);
  });
});

/**
 * Runs `cut` on a Locks (fixed leases of LEASE_MS) whose pool goes through a reply cutter, then checks that
 * another Locks gets the resource within WAIT_MS: only a release before the lease ends lets it in by then.
 */
async function throughCutter(
  cut: (t: { cutter: ReplyCutter; locks: Locks; res: string }) => Promise<void>,
): Promise<void> {
  await withCutter(async (t) => {
    await cut(t);
    const h = await t.theirs.acquire(t.res, { waitMs: WAIT_MS });
    expect(h.isHeld()).toBe(true);
    await h.release();
  });
}

/** A Locks (fixed leases of LEASE_MS) whose pool goes through a reply cutter, another on the direct pool, and a
 * fresh resource; all closed after `fn`. */
async function withCutter(
  fn: (t: { cutter: ReplyCutter; locks: Locks; theirs: Locks; res: string }) => Promise<void>,
): Promise<void> {
  const cutter = await startReplyCutter(inject("pgUrl"));
  const pool = await pgPoolThrough(cutter);
  const { locks } = makePgLocks(pool, { leaseMs: LEASE_MS });
  const { locks: theirs } = makePgLocks(direct);
  const res = uniq("pg-cut");
  try {
    await fn({ cutter, locks, theirs, res });
  } finally {
    await locks.close();
    await theirs.close();
    await pool.end();
    await cutter.close();
  }
}
