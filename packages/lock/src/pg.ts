import type { Pool } from "pg";
import { parseConfig } from "./config.js";
import { createLocksWithBackend } from "./core/create.js";
import { InvalidOptionError } from "./errors.js";
import { createPgBackend } from "./pg/backend.js";
import { pgTable } from "./pg/sql.js";
import type { CommonLocksOptions, Locks } from "./types.js";

// Every error class (errors.ts exports nothing else): a project with pg and without ioredis cannot load the root
// entry, which needs ioredis.
export * from "./errors.js";
export { isPgUnavailable } from "./pg/connection-error.js";
export { migratePgLocks, type PgMigrateOptions, pgLocksSchema } from "./pg/migrate.js";
export { DEFAULT_PG_TABLE, PG_CHANNEL } from "./pg/sql.js";

export interface PgLocksOptions extends CommonLocksOptions {
  /**
   * A node-postgres Pool with `max` ≥ 2: one connection is kept for LISTEN once a waiter queues.
   * It stays yours: close() gives that connection back but does not end the pool.
   */
  pool: Pool;
  /** `table` or `schema.table`, created by `migratePgLocks`. Default "lockyard_locks". */
  table?: string;
}

const PG_KEYS = ["pool", "table"] as const satisfies readonly (keyof PgLocksOptions)[];

/**
 * Locks on PostgreSQL with the same interface and behaviour as createLocks (watchdog, lost-lock signal,
 * re-entry, FIFO waiters woken by LISTEN/NOTIFY, events). Run `migratePgLocks(pool)` once first.
 * Throws InvalidOptionError synchronously on bad options.
 */
export function createPgLocks(options: PgLocksOptions): Locks {
  if (typeof options !== "object" || options === null)
    throw new InvalidOptionError("options", options, "an object");
  const pool = options.pool as unknown as
    | { query?: unknown; connect?: unknown; totalCount?: unknown; options?: { max?: unknown } }
    | undefined;
  if (
    typeof pool !== "object" ||
    pool === null ||
    typeof pool.query !== "function" ||
    typeof pool.connect !== "function"
  ) {
    throw new InvalidOptionError("pool", options.pool, "a node-postgres Pool");
  }
  // A pg.Client has query and connect too, but cannot lend a second connection for LISTEN: its waiters were
  // never woken by a release, only by their timers.
  if (typeof pool.totalCount !== "number")
    throw new InvalidOptionError(
      "pool",
      "a pg.Client",
      "a node-postgres Pool (new pg.Pool(...)), not a Client",
    );
  // With a single connection the LISTEN client would starve every query.
  const max = pool.options?.max;
  if (typeof max === "number" && max < 2) throw new InvalidOptionError("pool.max", max, "at least 2");
  const table = pgTable(options.table);
  const cfg = parseConfig(options, undefined, PG_KEYS);
  const { pool: _pool, table: _table, ...common } = options;
  return createLocksWithBackend(createPgBackend(options.pool, table, cfg.prefix), common);
}
