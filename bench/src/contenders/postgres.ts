import { createPgLocks, migratePgLocks } from "@lockyard/lock/pg";
import pg from "pg";
import type { BenchPostgres } from "../harness/postgres.js";
import { countStatements } from "../harness/sql-counter.js";
import { locksContender, lockyardOptions } from "./lockyard-common.js";
import type { Contender, ContenderFactory } from "./types.js";

const POOL_MAX = 10;
// Its own table, so a DATABASE_URL shared with the demo never has its locks truncated by the bench.
const TABLE = "lockyard_bench_locks";

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
      const { opts, text } = lockyardOptions(options, "createPgLocks", " by LISTEN/NOTIFY");
      const locks = createPgLocks({ pool, table: TABLE, ...opts });
      return locksContender(
        locks,
        `@lockyard/lock/pg ${text}; pg 8.16.3 Pool max ${POOL_MAX}; PostgreSQL ${version ?? "?"} on ${db.source}`,
        () => pool.end(),
      );
    },
  };
}
