import type { LocksDeltaEvent, LockView } from "../types.js";

/**
 * Several deltas folded into one with the same effect on a dashboard that applies them in order (removed by key,
 * then added/changed upserted by store + key): what a subscriber that fell behind receives instead of a backlog.
 * Views keep their remaining TTL as of the last delta's `at`.
 */
export function compact(events: readonly LocksDeltaEvent[]): LocksDeltaEvent {
  const last = events.at(-1)!;
  const removed = new Set<string>();
  const views = new Map<string, LockView | null>();
  for (const e of events) {
    for (const key of e.removed) {
      removed.add(key);
      for (const [id, v] of views) if (v?.key === key) views.set(id, null);
    }
    const age = last.at - e.at;
    for (const v of [...e.added, ...e.changed]) {
      views.set(`${v.store}\u0000${v.key}`, v.pttlMs < 0 ? v : { ...v, pttlMs: Math.max(0, v.pttlMs - age) });
    }
  }
  const upserts = [...views.values()].filter((v): v is LockView => v !== null);
  return {
    kind: "delta",
    at: last.at,
    instanceId: last.instanceId,
    added: upserts,
    changed: [],
    removed: [...removed],
  };
}
