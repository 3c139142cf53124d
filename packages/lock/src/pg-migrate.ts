import type { Pool } from "pg";
import { type PgTable, pgSchema, pgTable } from "./pg-sql.js";

export interface PgMigrateOptions {
  /** `table` or `schema.table`. Default "lockyard_locks". */
  table?: string;
}

// Any constant will do: it only serialises concurrent migrations (two API instances starting at once),
// since CREATE … IF NOT EXISTS alone can still fail with a unique violation in the catalog.
const MIGRATION_LOCK = 0x6c6f636b;

/**
 * Creates the lock table and its fencing sequence if missing. Idempotent and safe to run concurrently.
 * Run it once before createPgLocks (e.g. at startup); `pgLocksSchema()` gives the SQL for your own migrations.
 */
export async function migratePgLocks(pool: Pool, options: PgMigrateOptions = {}): Promise<void> {
  const t = pgTable(options.table);
  const client = await pool.connect();
  let broken: unknown;
  try {
    await client.query("BEGIN");
    try {
      await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await client.query(pgSchema(t));
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch((e: unknown) => {
        broken = e;
      });
      throw err;
    }
  } finally {
    // A connection that could not roll back must not go back to the pool.
    client.release(broken instanceof Error ? broken : undefined);
  }
}

/** The migration's SQL, for users who manage their schema with their own tool. */
export function pgLocksSchema(table?: string): string {
  return pgSchema(pgTable(table) as PgTable).trim();
}
