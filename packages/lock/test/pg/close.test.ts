// close() at any moment, PostgreSQL side: a server that stops answering (stalled, or a link that died without
// a reset) while a Locks listens. close() gave the LISTEN connection back with UNLISTEN and waited for the
// answer, which never came: it hung forever.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ReplyCutter, startReplyCutter } from "../../../../scripts/lib/reply-cutter.mjs";
import { type Locks, LocksClosedError } from "../../src/index.js";
import { PG_CHANNEL } from "../../src/pg.js";
import { sleep, uniq, untilListening } from "../helpers.js";
import { makePgLocks, pgPool, pgPoolThrough } from "../pg-helpers.js";

/** Far beyond the library's grace for an unanswered LISTEN connection: not reached unless close() hangs. */
const HUNG_AFTER_MS = 8_000;

let direct: pg.Pool;
beforeAll(async () => {
  direct = await pgPool();
});
afterAll(async () => {
  await direct.end();
});

describe("PostgreSQL backend: close() while the server stops answering", () => {
  it("returns, destroying the LISTEN connection instead of waiting for UNLISTEN; the waiter is told it closed", async () => {
    await listening(async ({ cutter, pool, locks, waiting }) => {
      const connected = pool.totalCount;
      cutter.holdReplies(); // from now on the server answers nothing
      await expectCloses(locks);
      expect(await waiting).toBeInstanceOf(LocksClosedError);
      // The LISTEN connection was destroyed, not put back in the pool for the next query to hang on.
      expect(pool.totalCount).toBe(connected - 1);
    });
  });

  it("returns while the LISTEN connection is being made again and the server never answers its greeting", async () => {
    await listening(async ({ cutter, locks, waiting }) => {
      cutter.holdReplies();
      // The server ends the LISTEN session (the cutter then closes the client's side); the library makes a new
      // one RECONNECT_MS later, whose start-up answer is held for good.
      const { rows } = await direct.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid()",
        [`LISTEN ${PG_CHANNEL}`],
      );
      expect(rows).toHaveLength(1);
      await sleep(900);
      await expectCloses(locks);
      expect(await waiting).toBeInstanceOf(LocksClosedError);
    });
  });
});

async function expectCloses(locks: Locks): Promise<void> {
  const closed = locks.close().then(() => "closed");
  expect(await Promise.race([closed, sleep(HUNG_AFTER_MS).then(() => "hung")])).toBe("closed");
}

/**
 * A Locks on a pool through a reply cutter, with a waiter (20 s) listening for the release of a lock another
 * Locks holds; runs `stall`, then cleans up.
 */
async function listening(
  stall: (t: {
    cutter: ReplyCutter;
    pool: pg.Pool;
    locks: Locks;
    waiting: Promise<unknown>;
  }) => Promise<void>,
): Promise<void> {
  const cutter = await startReplyCutter(inject("pgUrl"));
  const pool = await pgPoolThrough(cutter);
  const { locks } = makePgLocks(pool);
  const { locks: theirs } = makePgLocks(direct);
  const res = uniq("pg-close-stalled");
  try {
    const held = await theirs.acquire(res);
    const waiting = locks.acquire(res, { waitMs: 20_000 }).catch((e: unknown) => e);
    await untilListening(locks, res);
    await stall({ cutter, pool, locks, waiting });
    await held.release();
  } finally {
    await locks.close();
    await theirs.close();
    cutter.cut();
    await pool.end();
    await cutter.close();
  }
}
