import { InvalidOptionError } from "../errors.js";
import { parseMatch } from "../match.js";

/** The NOTIFY channel a release that frees a lock signals on; the payload is the resource name. */
export const PG_CHANNEL = "lockyard_released";
export const DEFAULT_PG_TABLE = "lockyard_locks";

const IDENT = /^[a-z_][a-z0-9_]{0,39}$/;

/** A validated table name: `table` or `schema.table`, lower-case identifiers (so quoting never changes case). */
export interface PgTable {
  /** As given, for keys and statement names. */
  name: string;
  /** Quoted table, e.g. `"public"."lockyard_locks"`. */
  table: string;
  /** Quoted fencing sequence, `<table>_fence` in the same schema. */
  sequence: string;
}

export function pgTable(name: unknown = DEFAULT_PG_TABLE): PgTable {
  const parts = typeof name === "string" ? name.split(".") : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((p) => IDENT.test(p))) {
    throw new InvalidOptionError(
      "table",
      name,
      "`table` or `schema.table` of 1-40 characters of [a-z0-9_] each",
    );
  }
  const q = (s: string) => `"${s}"`;
  const table = parts.map(q).join(".");
  const seqName = `${parts.at(-1)}_fence`;
  const sequence = parts.length === 2 ? `${q(parts[0]!)}.${q(seqName)}` : q(seqName);
  return { name: name as string, table, sequence };
}

/**
 * The idempotent migration. Rows are kept after release (owner NULL), like Redis keeps `fence:{r}`: so an
 * acquisition almost always takes the ON CONFLICT path, nextval runs only on fresh acquisitions, and
 * release/renew are HOT updates (no indexed column changes; hence the fillfactor).
 */
export function pgSchema(t: PgTable): string {
  return `
CREATE SEQUENCE IF NOT EXISTS ${t.sequence};
CREATE TABLE IF NOT EXISTS ${t.table} (
  resource   text PRIMARY KEY,
  owner      text,
  count      integer NOT NULL,
  expires_at timestamptz NOT NULL,
  fence      bigint,
  waiters    boolean NOT NULL DEFAULT false
) WITH (fillfactor = 70);`;
}

const ms = (param: string) => `${param}::int * interval '1 millisecond'`;
const pttl = (col: string) => `GREATEST(0, ceil(extract(epoch FROM ${col} - now()) * 1000))::int`;

/**
 * Every statement uses the database clock (`now()`, the statement's start in autocommit), so client clocks
 * never matter. A row is free when `expires_at <= now()`; it is held by `owner` otherwise.
 */
export function pgStatements(t: PgTable) {
  const free = "t.expires_at <= now()";
  const mine = "t.owner = excluded.owner";
  return {
    /**
     * $1 resource, $2 owner, $3 leaseMs, $4 more local waiters queue behind this caller.
     * One INSERT … ON CONFLICT DO UPDATE … WHERE free OR mine (at READ COMMITTED the conflicting row's latest
     * version is locked and tested). It also updates, holder's values kept, when the `waiters` mark is not
     * set yet, so the holder's release NOTIFYs: nobody pays for a NOTIFY when nobody waits.
     * Rows: (ok, count, fence, pttl). Held by another and already marked: the row from the snapshot
     * tells the remaining lease (approximate; it bounds the waiter's sleep only).
     */
    acquire: `
WITH a AS (
  INSERT INTO ${t.table} AS t (resource, owner, count, expires_at, fence, waiters)
  VALUES ($1, $2, 1, now() + ${ms("$3")},
    CASE WHEN EXISTS (SELECT 1 FROM ${t.table} WHERE resource = $1) THEN NULL ELSE nextval('${t.sequence}') END,
    $4::boolean)
  ON CONFLICT (resource) DO UPDATE SET
    owner = CASE WHEN ${free} THEN excluded.owner ELSE t.owner END,
    count = CASE WHEN ${free} THEN 1 WHEN ${mine} THEN t.count + 1 ELSE t.count END,
    expires_at = CASE WHEN ${free} OR ${mine} THEN GREATEST(t.expires_at, excluded.expires_at) ELSE t.expires_at END,
    fence = CASE WHEN ${free} THEN nextval('${t.sequence}') ELSE t.fence END,
    waiters = CASE WHEN ${free} THEN excluded.waiters WHEN ${mine} THEN t.waiters OR excluded.waiters ELSE true END
  WHERE ${free} OR ${mine} OR NOT t.waiters
  RETURNING t.owner = $2 AS ok, t.count, t.fence, t.expires_at
)
SELECT ok, count, fence, ${pttl("expires_at")} AS pttl FROM a
UNION ALL
SELECT false, count, fence, ${pttl("expires_at")} FROM ${t.table}
WHERE resource = $1 AND NOT EXISTS (SELECT 1 FROM a)`,

    /** The VALUES row saw the lock's row, which a purge deleted before the INSERT: give the fresh row its token. */
    assignFence: `UPDATE ${t.table} SET fence = nextval('${t.sequence}')
WHERE resource = $1 AND owner = $2 AND fence IS NULL RETURNING fence`,

    /** $1 resource, $2 owner, $3 leaseMs. Never shortens, never revives an expired or freed row. */
    renew: `UPDATE ${t.table} SET expires_at = GREATEST(expires_at, now() + ${ms("$3")})
WHERE resource = $1 AND owner = $2 AND expires_at > now()`,

    /** $1 resources, $2 owners, $3 leases (unique (resource, owner) pairs). Returns the pairs still held. */
    renewMany: `UPDATE ${t.table} AS t SET expires_at = GREATEST(t.expires_at, now() + i.lease * interval '1 millisecond')
FROM unnest($1::text[], $2::text[], $3::int[]) AS i(resource, owner, lease)
WHERE t.resource = i.resource AND t.owner = i.owner AND t.expires_at > now()
RETURNING t.resource, t.owner`,

    /**
     * $1 resource, $2 owner, $3 leaseMs, $4 the hold's token (null: unknown). No row → not-owner (also when the
     * row was granted afresh since, to the same owner name: a late retry of an old hold's release must not free
     * the new grant); count left > 0 → decremented (lease raised, never lowered); 0 → freed, and NOTIFY in the
     * same statement (so at its commit) if a waiter marked it.
     */
    release: `
WITH r AS (
  UPDATE ${t.table} SET
    count = count - 1,
    owner = CASE WHEN count > 1 THEN owner END,
    expires_at = CASE WHEN count > 1 THEN GREATEST(expires_at, now() + ${ms("$3")}) ELSE now() END
  WHERE resource = $1 AND owner = $2 AND expires_at > now() AND ($4::bigint IS NULL OR fence = $4::bigint)
  RETURNING count, waiters
)
SELECT count, CASE WHEN count = 0 AND waiters THEN pg_notify('${PG_CHANNEL}', $1::text) END AS notified
FROM r`,

    /** $1 LIKE pattern, $2 limit, $3 resources after this one (a page). Live locks only. */
    list: `SELECT resource, owner, count, fence, ${pttl("expires_at")} AS pttl FROM ${t.table}
WHERE expires_at > now() AND owner IS NOT NULL AND resource LIKE $1 AND resource > $3
ORDER BY resource LIMIT $2`,
  };
}

export type PgStatements = ReturnType<typeof pgStatements>;

/** A resource glob (match.ts) as a LIKE pattern matching every name it matches (`[…]` becomes `_`). */
export function globToLike(glob: string): string {
  return parseMatch(glob).like;
}
