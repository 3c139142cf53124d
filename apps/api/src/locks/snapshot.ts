import type { LockInfo, Locks } from "@lockyard/lock";
import type { LockStore, LockView } from "../types.js";
import { LOCK_PREFIX } from "./keys.js";
import { type RedisClient, scanLocks } from "./read.js";
import { byResource, entryOfInfo, entryOfRaw, ownerInstance, viewOf } from "./views.js";

export { ownerInstance };

export interface LockSource {
  store: LockStore;
  locks: Locks;
  /** An optional store that fails is left out of the snapshot instead of failing it. */
  optional: boolean;
}

/** The stores a context may have (context.ts's Services has these); typed here so locks/ never imports it. */
export interface LockStores {
  locks: Locks;
  redlock: Locks | null;
  postgres: { locks: Locks } | null;
}

/** Every store whose locks the dashboard shows; read per call, since optional stores come and go. */
export function lockSources(ctx: LockStores): LockSource[] {
  const sources: LockSource[] = [{ store: "redis", locks: ctx.locks, optional: false }];
  if (ctx.redlock) sources.push({ store: "redlock", locks: ctx.redlock, optional: true });
  if (ctx.postgres) sources.push({ store: "postgres", locks: ctx.postgres.locks, optional: true });
  return sources;
}

/** A mutex as a `Locks.list()` describes it (their `list()` shows mutexes only). */
export function toLockView(info: LockInfo, store: LockStore = "redis"): LockView {
  const now = Date.now();
  return viewOf(entryOfInfo(info, store, now), now);
}

/** Every held mutex of one `Locks` whose resource starts with `prefix`, through its `list()`, sorted. */
export async function listLocks(locks: Locks, prefix = "", store: LockStore = "redis"): Promise<LockView[]> {
  const all = await locks.list();
  return all
    .filter((l) => l.resource.startsWith(prefix) && l.owners.length > 0)
    .map((l) => toLockView(l, store))
    .sort(byResource);
}

/**
 * The held locks of every store, merged: `locks.list`. The main Redis is read directly (one SCAN pass for the
 * prefix, which also reads the waiters and finds every kind: mutexes, semaphores, read-write locks); the
 * optional stores through their `list()`.
 */
export async function listAllLocks(
  redis: RedisClient,
  sources: readonly LockSource[],
  prefix = "",
): Promise<LockView[]> {
  const lists = await Promise.all(
    sources.map(async (s): Promise<LockView[]> => {
      if (s.store === "redis") {
        const raws = await scanLocks(redis, LOCK_PREFIX, prefix);
        // TTLs count from each read's answer (readAt): "now" taken before the scan made every TTL shown longer
        // than Redis's by the scan's own time (a lease of 2 000 ms listed at 2 003 in a CI run).
        const at = Date.now();
        return raws.map((raw) => viewOf(entryOfRaw(raw, null), at));
      }
      return listLocks(s.locks, prefix, s.store).catch((err: unknown) => {
        if (s.optional) return [];
        throw err;
      });
    }),
  );
  return lists.flat().sort(byResource);
}
