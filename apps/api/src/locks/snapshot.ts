import type { Context } from "../context.js";
import type { LockInfo, Locks } from "../lock.js";
import type { LockStore, LocksSnapshot, LockView } from "../types.js";

export interface LockSource {
  store: LockStore;
  locks: Locks;
  /** An optional store that fails is left out of the snapshot instead of failing it. */
  optional: boolean;
}

/** Every store whose locks the dashboard shows; read per call, since optional stores come and go. */
export function lockSources(ctx: Pick<Context, "locks" | "redlock" | "postgres">): LockSource[] {
  const sources: LockSource[] = [{ store: "redis", locks: ctx.locks, optional: false }];
  if (ctx.redlock) sources.push({ store: "redlock", locks: ctx.redlock, optional: true });
  if (ctx.postgres) sources.push({ store: "postgres", locks: ctx.postgres.locks, optional: true });
  return sources;
}

/** Owner ids are `<instanceId>:<random hex>`; the prefix says which process holds the lock. */
export function ownerInstance(owner: string): string {
  const i = owner.lastIndexOf(":");
  return i > 0 ? owner.slice(0, i) : owner;
}

export function toLockView(info: LockInfo, store: LockStore = "redis"): LockView {
  return {
    store,
    key: info.key,
    resource: info.resource,
    owners: info.owners.map((o) => ({ owner: o.owner, count: o.count, instanceId: ownerInstance(o.owner) })),
    pttlMs: info.pttlMs,
    leaseMs: info.leaseMs ?? null,
    token: info.token ?? null,
  };
}

/** Every held lock whose resource starts with `prefix`, sorted for stable diffs. */
export async function listLocks(locks: Locks, prefix = "", store: LockStore = "redis"): Promise<LockView[]> {
  const all = await locks.list();
  return all
    .filter((l) => l.resource.startsWith(prefix) && l.owners.length > 0)
    .map((l) => toLockView(l, store))
    .sort(byResource);
}

/** The held locks of every store, merged. */
export async function listAllLocks(sources: readonly LockSource[], prefix = ""): Promise<LockView[]> {
  const lists = await Promise.all(
    sources.map((s) => {
      const list = listLocks(s.locks, prefix, s.store);
      return s.optional ? list.catch((): LockView[] => []) : list;
    }),
  );
  return lists.flat().sort(byResource);
}

function byResource(a: LockView, b: LockView): number {
  if (a.resource !== b.resource) return a.resource < b.resource ? -1 : 1;
  return a.store < b.store ? -1 : a.store > b.store ? 1 : 0;
}

export async function snapshot(
  sources: readonly LockSource[],
  instanceId: string,
  prefix = "",
): Promise<LocksSnapshot> {
  return { at: Date.now(), instanceId, locks: await listAllLocks(sources, prefix) };
}

/** What makes two snapshots different, ignoring the TTL countdown itself. */
export function fingerprint(locks: LockView[]): string {
  return JSON.stringify(locks.map((l) => [l.store, l.resource, l.owners, l.token, l.leaseMs]));
}
