import type { Pool } from "pg";
import { InvalidOptionError } from "../errors.js";
import { checkKnownKeys } from "../options.js";
import { type PgTable, pgSchema, pgTable } from "./sql.js";

export interface PgMigrateOptions {
  /** `table` or `schema.table`. Default "lockyard_locks". */
  table?: string;
  /**
   * Every fencing token handed out afterwards is greater than this. Pass the highest token your fenced
   * store has accepted when that store can outlive the lock table (a new or restored database): a fresh
   * sequence would start again at 1 and every fenced write would be refused as stale. Never lowers it.
   */
  fenceAtLeast?: number;
}

const MIGRATE_KEYS: ReadonlySet<string> = new Set([
  "table",
  "fenceAtLeast",
] satisfies (keyof PgMigrateOptions)[]);

// Any constant will do: it only serialises concurrent migrations (two API instances starting at once),
// since CREATE … IF NOT EXISTS alone can still fail with a unique violation in the catalog.
const MIGRATION_LOCK = 0x6c6f636b;

/** 2^53 − 2^32: room for four billion tokens before the sequence leaves the numbers a JavaScript number holds. */
const MAX_FENCE_FLOOR = Number.MAX_SAFE_INTEGER - 2 ** 32;

/**
 * Creates the lock table and its fencing sequence if missing. Idempotent and safe to run concurrently.
 * Run it once before createPgLocks (e.g. at startup); `pgLocksSchema()` gives the SQL for your own migrations.
 * Rejects with InvalidOptionError for a bad pool, `table` or `fenceAtLeast` or an unknown option, before any
 * query.
 */
export async function migratePgLocks(pool: Pool, options: PgMigrateOptions = {}): Promise<void> {
  const p = pool as unknown as { connect?: unknown } | null | undefined;
  if (typeof p !== "object" || p === null || typeof p.connect !== "function")
    throw new InvalidOptionError("pool", pool, "a node-postgres Pool");
  if (typeof options !== "object" || options === null)
    throw new InvalidOptionError("options", options, "an object");
  // A misspelt `tabel` would migrate the default table and leave the one meant missing.
  checkKnownKeys(options, MIGRATE_KEYS);
  const t = pgTable(options.table);
  const floor = options.fenceAtLeast;
  if (floor !== undefined && !(Number.isSafeInteger(floor) && floor >= 0 && floor <= MAX_FENCE_FLOOR)) {
    throw new InvalidOptionError(
      "fenceAtLeast",
      floor,
      `an integer in [0, ${MAX_FENCE_FLOOR}] (the tokens after it must stay exact JavaScript numbers)`,
    );
  }
  const client = await pool.connect();
  let broken: unknown;
  try {
    await client.query("BEGIN");
    try {
      await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await client.query(pgSchema(t));
      // Only ever raised. setval cannot exclude a concurrent nextval, which is why the floor belongs to
      // the migration that runs before this process takes locks; once raised, later calls change nothing.
      if (floor)
        await client.query(
          `SELECT setval('${t.sequence}', $1) FROM ${t.sequence} WHERE last_value < $1 OR NOT is_called`,
          [floor],
        );
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
