import { type CommonLocksOptions, LockTimeoutError } from "@lockyard/lock";
import { createPgLocks, migratePgLocks } from "@lockyard/lock/pg";
import pg from "pg";
import type { BenchPostgres } from "../harness/postgres.js";
import { countStatements } from "../harness/sql-counter.js";
import type { Contender, ContenderFactory, ProfileOptions } from "./types.js";

const POOL_MAX = 10;
// Its own table, so a DATABASE_URL shared with the demo never has its locks truncated by the bench.
const TABLE = "lockyard_bench_locks";

function optionsFor({ profile, leaseMs = 1_800 }: ProfileOptions): {
  opts: CommonLocksOptions;
  text: string;
} {
  switch (profile) {
    case "recommended":
      return {
        opts: {},
        text: "createPgLocks defaults: lease 30 s renewed by the batched watchdog, waitMs 5 s, wake on release by LISTEN/NOTIFY (fallback retry ≤ 500 ms)",
      };
    case "seed":
      return {
        opts: { waitMs: 5_000, retry: { maxMs: 100 } },
        text: "createPgLocks with waitMs 5 s, retry.maxMs 100 ms (wake on release by LISTEN/NOTIFY stays on)",
      };
    case "watchdog":
      return {
        opts: { leaseMs },
        text: `createPgLocks({ leaseMs: ${leaseMs} }): the batched watchdog renews every ${Math.round(leaseMs / 3)} ms`,
      };
  }
}

/**
 * Lockyard's PostgreSQL backend: the same Locks as the Redis contender, on a lock table. A different store,
 * so scenarios list it apart from the Redis peers and count its SQL statements instead of Redis commands.
 * Each create() is a fresh pool and an emptied table, as FLUSHALL gives the Redis contenders a fresh Redis.
 */
export function postgresContender(db: BenchPostgres): ContenderFactory {
  return {
    id: "postgres",
    label: "Lockyard on PostgreSQL (lock table)",
    async create(_redisUrl, options): Promise<Contender> {
      const pool = new pg.Pool({ connectionString: db.url, max: POOL_MAX, application_name: "lib-postgres" });
      // An idle client's error (e.g. the server stopping at the end) must not crash the bench.
      pool.on("error", () => {});
      countStatements(pool, `lib-${this.id}`);
      await migratePgLocks(pool, { table: TABLE });
      await pool.query(`TRUNCATE ${TABLE}`);
      const version = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v"))
        .rows[0]?.v;
      const { opts, text } = optionsFor(options);
      const locks = createPgLocks({ pool, table: TABLE, ...opts });
      return {
        settings: `@lockyard/lock/pg ${text}; pg 8.16.3 Pool max ${POOL_MAX}; PostgreSQL ${version ?? "?"} on ${db.source}`,
        async acquire(key) {
          try {
            const h = await locks.acquire(key);
            return { release: async () => void (await h.release()) };
          } catch (err) {
            if (err instanceof LockTimeoutError) return null;
            throw err;
          }
        },
        async close() {
          await locks.close();
          await pool.end();
        },
      };
    },
  };
}
