import pg from "pg";
import { inject, onTestFinished } from "vitest";
import type { LockEvent } from "../src/index.js";
import { createPgLocks, migratePgLocks, type PgLocksOptions } from "../src/pg.js";

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string;
  }
}

export const TABLE = "lockyard_test_locks";

/**
 * A small pool: many concurrent acquirers must queue on it, not open a connection each. `applicationName` names
 * its sessions in pg_stat_activity, so a test can count or end its own and no other test's.
 */
export async function pgPool(max = 4, applicationName?: string): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: inject("pgUrl"), max, application_name: applicationName });
  // Idle clients report a server going away here; unheard, it would crash the test process.
  pool.on("error", () => {});
  await migratePgLocks(pool, { table: TABLE });
  return pool;
}

/**
 * A pool whose connections go through a reply cutter (scripts/lib/reply-cutter.mjs), already connected: what
 * the cutter holds or drops next is a statement, not the server's greeting.
 */
export async function pgPoolThrough(cutter: { port: number }, max = 3): Promise<pg.Pool> {
  const url = new URL(inject("pgUrl"));
  url.port = String(cutter.port);
  const pool = new pg.Pool({ connectionString: url.toString(), max });
  pool.on("error", () => {}); // a cut or destroyed client reports here; unheard, it would crash the process
  await pool.query("SELECT 1");
  return pool;
}

/**
 * Closed when the test ends, passed or failed (close() is idempotent): a Locks left open keeps its LISTEN
 * connection checked out, and the file's `pool.end()` in afterAll then waits for it until the hook times out,
 * failing the file even when the test passed on its retry.
 */
export function makePgLocks(pool: pg.Pool, opts: Partial<PgLocksOptions> = {}) {
  const events: LockEvent[] = [];
  const locks = createPgLocks({ pool, table: TABLE, onEvent: (e) => events.push(e), ...opts });
  onTestFinished(() => locks.close());
  return { locks, events };
}

/** The lock's row as stored. */
export async function row(pool: pg.Pool, resource: string) {
  const { rows } = await pool.query(
    `SELECT owner, count, fence::int AS fence, waiters, expires_at > now() AS live FROM ${TABLE} WHERE resource = $1`,
    [resource],
  );
  return rows[0] as
    | { owner: string | null; count: number; fence: number; waiters: boolean; live: boolean }
    | undefined;
}
