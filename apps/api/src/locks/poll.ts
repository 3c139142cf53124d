import type { LockSource } from "./snapshot.js";
import { type Change, differs, type Entry, emptyChange, entryId, entryOfInfo } from "./views.js";

/**
 * One poll of the stores that publish no notifications (the Redlock nodes, the PostgreSQL lock table): their
 * `list()`, diffed against `entries` (updated in place). A store that fails, or is gone, shows no locks, as
 * before the observer existed.
 */
export async function pollStores(sources: readonly LockSource[]): Promise<Map<string, Entry>> {
  const others = sources.filter((s) => s.store !== "redis");
  const lists = await Promise.all(others.map((s) => s.locks.list().catch(() => null)));
  const now = Date.now();
  const next = new Map<string, Entry>();
  others.forEach((s, i) => {
    for (const info of lists[i] ?? []) {
      if (info.owners.length > 0) next.set(entryId(s.store, info.key), entryOfInfo(info, s.store, now));
    }
  });
  return next;
}

export function applyPoll(entries: Map<string, Entry>, next: ReadonlyMap<string, Entry>): Change {
  const change = emptyChange();
  for (const [id, e] of entries) {
    if (e.store !== "redis" && !next.has(id)) {
      entries.delete(id);
      change.removed.push(e);
    }
  }
  for (const [id, e] of next) {
    const prev = entries.get(id);
    if (!prev) change.added.push(e);
    else if (differs(prev, e)) change.changed.push(e);
    else continue;
    entries.set(id, e);
  }
  return change;
}
