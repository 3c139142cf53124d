import type { LockEvent, Locks } from "@lockyard/lock";
import { createPgLocks, migratePgLocks } from "@lockyard/lock/pg";
import pg, { type Pool, type PoolConfig } from "pg";
import type { Logger } from "pino";
import type { LockFactory } from "./observed-locks.js";

/**
 * The one place that creates PostgreSQL pools. Small (the burst's waiters queue in the lock library,
 * not on the pool), failing fast while the server is down, and never left hanging on a dead socket.
 */
export const pgPoolOptions = {
  max: 5,
  connectionTimeoutMillis: 2_000,
  query_timeout: 5_000,
  idleTimeoutMillis: 30_000,
} satisfies PoolConfig;

export function createPgPool(url: string, opts: { name: string; logger?: Logger }): Pool {
  const pool = new pg.Pool({ connectionString: url, application_name: opts.name, ...pgPoolOptions });
  // An idle client whose server goes away emits 'error' on the pool; unheard, it would crash the process.
  pool.on("error", (err) => opts.logger?.warn({ err: err.message }, "postgres connection lost"));
  return pool;
}

/** `host:port/database`, without credentials: safe to show on the dashboard. */
export function pgServer(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
}

/** The `postgres` mode once its lock table exists. */
export interface PostgresMode {
  locks: Locks;
  pool: Pool;
  server: string;
}

export interface PostgresOptions {
  url: string | undefined;
  instanceId: string;
  leaseMs: number;
  onEvent?: (e: LockEvent) => void;
  /** How the Locks is made from createPgLocks and its options (services.ts instruments it); default: directly. */
  create?: LockFactory;
  logger: Logger;
  /** Called whenever the mode becomes available (mode set) or not (mode null, with the reason). */
  onChange: (mode: PostgresMode | null, reason: string | null) => void;
  /** The highest token the fenced store has accepted; the lock table's sequence is raised past it. */
  fenceFloor?: () => Promise<number>;
  retryMs?: number;
}

const RETRY_MS = 5_000;

/**
 * Opens the `postgres` mode: migrates the lock table (idempotent; every instance does it), then creates the
 * Locks. Until that succeeds the mode is unavailable with the reason, and it retries every few seconds, so
 * a PostgreSQL that comes up after the API is picked up without a restart.
 */
export function connectPostgres(opts: PostgresOptions): { ready: Promise<void>; close(): Promise<void> } {
  if (!opts.url) {
    opts.onChange(null, "DATABASE_URL is not set");
    return { ready: Promise.resolve(), close: async () => {} };
  }
  const server = pgServer(opts.url);
  const pool = createPgPool(opts.url, { name: opts.instanceId, logger: opts.logger });
  let mode: PostgresMode | null = null;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let lastFailure: string | undefined;
  let current: Promise<void>;

  const attempt = async (): Promise<void> => {
    // PostgreSQL first: with both down, the mode is unavailable because of PostgreSQL, not the fence read.
    let failure = `PostgreSQL at ${server} is unreachable`;
    try {
      await pool.query("SELECT 1");
      failure = "the highest PostgreSQL token written could not be read from Redis";
      const fenceAtLeast = (await opts.fenceFloor?.()) ?? 0;
      failure = `migrating the lock table in PostgreSQL at ${server} failed`;
      await migratePgLocks(pool, { fenceAtLeast });
    } catch (err) {
      if (closed) return;
      const reason = `${failure} (${(err as Error).message})`;
      // Once per cause, not once per retry.
      if (failure !== lastFailure)
        opts.logger.warn({ server, reason }, `postgres mode unavailable: ${failure}`);
      lastFailure = failure;
      opts.onChange(null, reason);
      timer = setTimeout(() => {
        timer = undefined;
        current = attempt();
      }, opts.retryMs ?? RETRY_MS);
      timer.unref();
      return;
    }
    if (closed) return;
    const create = opts.create ?? ((make, options) => make(options));
    const locks = create(createPgLocks, {
      pool,
      instanceId: opts.instanceId,
      leaseMs: opts.leaseMs,
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    });
    mode = { locks, pool, server };
    opts.logger.info({ server }, "postgres mode available");
    opts.onChange(mode, null);
  };

  opts.onChange(null, `connecting to PostgreSQL at ${server}`);
  current = attempt();
  return {
    ready: current,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await current;
      await mode?.locks.close().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
}
