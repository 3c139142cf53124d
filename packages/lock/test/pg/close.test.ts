// close() at any moment, PostgreSQL side: a server that stops answering (stalled, or a link that died without
// a reset) while a Locks listens. close() gave the LISTEN connection back with UNLISTEN and waited for the
// answer, which never came: it hung forever.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { startReplyCutter } from "../../../../scripts/lib/reply-cutter.mjs";
import { LocksClosedError } from "../../src/index.js";
import { sleep, uniq } from "../helpers.js";
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
    const cutter = await startReplyCutter(inject("pgUrl"));
    const pool = await pgPoolThrough(cutter);
    const { locks } = makePgLocks(pool);
    const { locks: theirs } = makePgLocks(direct);
    const res = uniq("pg-close-stalled");
    try {
      const held = await theirs.acquire(res);
      const waiting = locks.acquire(res, { waitMs: 20_000 }).catch((e: unknown) => e);
      const gates = (locks as unknown as { gates: Map<string, { subscription?: string }> }).gates;
      await vi.waitFor(() => expect(gates.get(res)?.subscription).toBe("subscribed"));
      const connected = pool.totalCount;

      cutter.holdReplies(); // from now on the server answers nothing
      const closed = locks.close().then(() => "closed");
      expect(await Promise.race([closed, sleep(HUNG_AFTER_MS).then(() => "hung")])).toBe("closed");
      expect(await waiting).toBeInstanceOf(LocksClosedError);
      // The LISTEN connection was destroyed, not put back in the pool for the next query to hang on.
      expect(pool.totalCount).toBe(connected - 1);
      await held.release();
    } finally {
      await theirs.close();
      cutter.cut();
      await pool.end();
      await cutter.close();
    }
  });
});
