import type { Pool, QueryResultRow } from "pg";
import type { AcquireReply, LockBackend, ReleaseReply, RenewItem } from "../core/backend.js";
import { LockError } from "../errors.js";
import { parseMatch } from "../match.js";
import { lockKey, resourceOfKey } from "../resource.js";
import type { LockInfo } from "../types.js";
import { isPgUnavailable, isRolledBack } from "./connection-error.js";
import { createPgListener } from "./listener.js";
import { runAgainOnConflict } from "./run-again.js";
import { globToLike, type PgTable, pgStatements } from "./sql.js";

interface AcquireRow {
  ok: boolean;
  count: number;
  fence: string | null;
  pttl: number;
}

/**
 * PostgreSQL as a LockBackend: every operation is one statement on the pool (autocommit, READ COMMITTED),
 * named so each connection parses it once. Handles, watchdog, waiters and lost-lock logic stay in the core.
 */
interface ListRow {
  resource: string;
  owner: string;
  count: number;
  fence: string | null;
  pttl: number;
}

export function createPgBackend(pool: Pool, t: PgTable, prefix: string): LockBackend {
  const sql = pgStatements(t);
  const query = <R extends QueryResultRow>(op: keyof typeof sql, values: unknown[]) =>
    runAgainOnConflict(() => pool.query<R>({ name: `lockyard.${t.name}.${op}`, text: sql[op], values }));
  const resourceOf = (key: string) => resourceOfKey(prefix, key);
  // Errors of an acquire whose first statement was rolled back: nothing ran, so the core may try again. Not
  // the fence's statement, which runs after the grant committed.
  const refusedAcquires = new WeakSet<object>();

  return {
    async acquire(resource, _key, owner, leaseMs, moreWaiters): Promise<AcquireReply> {
      const { rows } = await query<AcquireRow>("acquire", [resource, owner, leaseMs, moreWaiters]).catch(
        (err: unknown) => {
          if (isRolledBack(err) && typeof err === "object" && err !== null) refusedAcquires.add(err);
          throw err;
        },
      );
      const row = rows[0];
      // No row: the conflicting row was committed after this statement's snapshot. Look again soon.
      if (!row) return [0, 0];
      if (!row.ok) return [0, row.pttl];
      let fence = row.fence;
      if (fence === null) {
        const r = await query<{ fence: string }>("assignFence", [resource, owner]);
        fence = r.rows[0]?.fence ?? null;
      }
      const token = fence === null ? null : Number(fence);
      if (token !== null && !Number.isSafeInteger(token)) {
        // Past 2^53 - 1 a JavaScript number rounds: two grants could carry the same token. Not handed out.
        await query("release", [resource, owner, leaseMs, null]).catch(() => {});
        throw new LockError(
          `the fencing token ${fence} for "${resource}" is past 2^53 - 1, where JavaScript numbers round and two grants could share a token, so the lock was given back: ${t.sequence} was raised past what migratePgLocks' fenceAtLeast allows; lower it (and reset any store that keeps the highest token it saw)`,
        );
      }
      return [1, row.count, token];
    },

    async renew(key, owner, leaseMs) {
      const resource = resourceOf(key);
      if (resource === null) return false;
      const r = await query("renew", [resource, owner, leaseMs]);
      return r.rowCount === 1;
    },

    async renewMany(items: readonly RenewItem[]) {
      // One row per (resource, owner), the longest lease: an UPDATE … FROM joins each target row once.
      // Sorted, so two processes' batches lock rows in the same order.
      const pairs = new Map<string, { resource: string; owner: string; leaseMs: number }>();
      const ids: (string | null)[] = items.map((it) => {
        const resource = resourceOf(it.key);
        if (resource === null) return null;
        const id = `${resource}\n${it.owner}`;
        const p = pairs.get(id);
        if (!p) pairs.set(id, { resource, owner: it.owner, leaseMs: it.leaseMs });
        else if (it.leaseMs > p.leaseMs) p.leaseMs = it.leaseMs;
        return id;
      });
      if (pairs.size === 0) return items.map(() => false);
      const sorted = [...pairs.values()].sort((a, b) => (a.resource < b.resource ? -1 : 1));
      const { rows } = await query<{ resource: string; owner: string }>("renewMany", [
        sorted.map((p) => p.resource),
        sorted.map((p) => p.owner),
        sorted.map((p) => p.leaseMs),
      ]);
      const held = new Set(rows.map((r) => `${r.resource}\n${r.owner}`));
      return ids.map((id) => id !== null && held.has(id));
    },

    async release(resource, _key, owner, leaseMs, token): Promise<ReleaseReply> {
      const { rows } = await query<{ count: number }>("release", [resource, owner, leaseMs, token]);
      const row = rows[0];
      if (!row) return [0];
      return row.count > 0 ? [1, row.count] : [2];
    },

    async list(match, _count, limit): Promise<Omit<LockInfo, "leaseMs">[]> {
      const m = parseMatch(match);
      const like = globToLike(match);
      // LIKE is wider than the glob (`[…]` becomes `_`): the SQL LIMIT would count rows the exact filter then
      // drops, and return fewer than `limit` (none, for `p[x]*` under rows that only LIKE matches). So pages,
      // each after the last resource seen, until `limit` match or the rows end.
      const found: ListRow[] = [];
      let after = "";
      for (;;) {
        const { rows } = await query<ListRow>("list", [like, limit, after]);
        for (const r of rows) if (m.test(r.resource) && found.length < limit) found.push(r);
        if (rows.length < limit || found.length >= limit) break;
        after = rows[rows.length - 1]!.resource;
      }
      return found.map((r) => {
        const info: Omit<LockInfo, "leaseMs"> = {
          key: lockKey(prefix, r.resource),
          resource: r.resource,
          owners: [{ owner: r.owner, count: r.count }],
          pttlMs: r.pttl,
        };
        if (r.fence !== null) info.token = Number(r.fence);
        return info;
      });
    },

    noReply: isPgUnavailable,
    refused: (err) => typeof err === "object" && err !== null && refusedAcquires.has(err),

    createSubscriber(onRelease) {
      return createPgListener(pool, onRelease);
    },

    async close() {},
  };
}
