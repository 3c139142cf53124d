import type { LockInfo, Locks } from "../lock.js";
import type { LocksSnapshot, LockView } from "../types.js";

/** Owner ids are `<instanceId>:<random hex>`; the prefix says which process holds the lock. */
export function ownerInstance(owner: string): string {
  const i = owner.lastIndexOf(":");
  return i > 0 ? owner.slice(0, i) : owner;
}

export function toLockView(info: LockInfo): LockView {
  return {
    key: info.key,
    resource: info.resource,
    owners: info.owners.map((o) => ({ owner: o.owner, count: o.count, instanceId: ownerInstance(o.owner) })),
    pttlMs: info.pttlMs,
    leaseMs: info.leaseMs ?? null,
    token: info.token ?? null,
  };
}

/** Every held lock whose resource starts with `prefix`, sorted for stable diffs. */
export async function listLocks(locks: Locks, prefix = ""): Promise<LockView[]> {
  const all = await locks.list();
  return all
    .filter((l) => l.resource.startsWith(prefix) && l.owners.length > 0)
    .map(toLockView)
    .sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
}

export async function snapshot(locks: Locks, instanceId: string, prefix = ""): Promise<LocksSnapshot> {
  const list = await listLocks(locks, prefix);
  return { at: Date.now(), instanceId, locks: list };
}

/** What makes two snapshots different, ignoring the TTL countdown itself. */
export function fingerprint(locks: LockView[]): string {
  return JSON.stringify(locks.map((l) => [l.resource, l.owners, l.token, l.leaseMs]));
}
