import { lockOfKey } from "./keys.js";
import type { RawLock } from "./parse.js";
import {
  type Change,
  differs,
  type Entry,
  entryId,
  entryOfRaw,
  fleetingEntry,
  RENEWAL_SLACK_MS,
  SCAN_SLACK_MS,
} from "./views.js";

/**
 * One Redis lock key as just read, applied to `entries` and recorded in `change`. `fresh` when an event caused
 * the read: its TTL is then within a few ms of the lease, which becomes the lock's `leaseMs` estimate.
 */
export function applyRaw(
  entries: Map<string, Entry>,
  change: Change,
  key: string,
  raw: RawLock | null,
  fresh: boolean,
): void {
  const id = entryId("redis", key);
  const prev = entries.get(id);
  if (!raw) {
    if (prev) {
      entries.delete(id);
      change.removed.push(prev);
    }
    return;
  }
  const sameOwners = prev?.owners.map((o) => o.owner).join() === raw.owners.map((o) => o.owner).join();
  const known = sameOwners ? (prev?.leaseMs ?? null) : null;
  const leaseMs = fresh && raw.pttlMs > 0 ? Math.max(known ?? 0, raw.pttlMs) : known;
  const next = entryOfRaw(raw, leaseMs);
  if (!prev) change.added.push(next);
  else if (differs(prev, next, fresh ? RENEWAL_SLACK_MS : SCAN_SLACK_MS)) change.changed.push(next);
  else {
    // The same to a viewer, but when to look again may have moved (a waiting writer renews its mark).
    if (prev.recheckAt !== next.recheckAt || prev.writerWaitsUntil !== next.writerWaitsUntil) {
      entries.set(id, { ...prev, recheckAt: next.recheckAt, writerWaitsUntil: next.writerWaitsUntil });
    }
    return;
  }
  entries.set(id, next);
}

/**
 * The lock a read missed: the key was `taken` (an event said so) since its last read, is gone now, and was never
 * known. It came and went between two reads; null when there is no such lock.
 */
export function fleetingLock(
  entries: ReadonlyMap<string, Entry>,
  prefix: string,
  key: string,
  raw: RawLock | null,
  taken: boolean,
): Entry | null {
  if (!taken || raw || entries.has(entryId("redis", key))) return null;
  const lock = lockOfKey(prefix, key);
  return lock === null ? null : fleetingEntry(key, lock.kind, lock.resource, Date.now());
}

/**
 * A full scan's result applied to `entries`: what it found is upserted, Redis locks it did not find are removed.
 * A key an event touched while the scan ran is left alone: the event's own read is newer.
 */
export function applyScan(
  entries: Map<string, Entry>,
  change: Change,
  found: readonly RawLock[],
  touched: ReadonlySet<string>,
): void {
  const seen = new Set<string>();
  for (const raw of found) {
    seen.add(raw.key);
    if (!touched.has(raw.key)) applyRaw(entries, change, raw.key, raw, false);
  }
  for (const e of [...entries.values()]) {
    if (e.store === "redis" && !seen.has(e.key) && !touched.has(e.key))
      applyRaw(entries, change, e.key, null, false);
  }
}

/** When a Redis lock must be read again without an event: its expiry, or a holder's or writer mark's end. */
export function dueAt(e: Entry): number | null {
  if (e.store !== "redis") return null;
  if (e.expiresAt === null || e.recheckAt === null) return e.expiresAt ?? e.recheckAt;
  return Math.min(e.expiresAt, e.recheckAt);
}

/** The earliest time a Redis lock is due to be read again, or null. */
export function firstExpiry(entries: ReadonlyMap<string, Entry>): number | null {
  let first: number | null = null;
  for (const e of entries.values()) {
    const due = dueAt(e);
    if (due !== null && (first === null || due < first)) first = due;
  }
  return first;
}
