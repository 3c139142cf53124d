import type { HoldMode, LockKind } from "../types.js";
import { MARK_FIELDS } from "./keys.js";

/** One holder as read from a lock hash. */
export interface RawHolder {
  owner: string;
  count: number;
  mode: HoldMode;
}

/** One Redis lock as read: its kind, holders, TTL, token and who waits for it. */
export interface RawLock {
  key: string;
  kind: LockKind;
  resource: string;
  /** Live holders, sorted by owner. */
  owners: RawHolder[];
  /** PTTL as Redis answered it (-1: no TTL): for a semaphore or read-write lock, its latest lease. */
  pttlMs: number;
  token: number | null;
  waiters: number;
  /** A semaphore's `~permits`; null for the other kinds (or when never recorded). */
  permits: number | null;
  /** How long a waiting writer's mark still keeps new readers out (read-write locks; 0: no writer waits). */
  writerWaitsMs: number;
  /**
   * For a semaphore or read-write lock: ms until a holder's own lease or the writer mark ends before the key
   * does. Nothing tells the observer then (the scripts drop a dead holder only when someone next looks), so
   * it reads the key again at that time. Null for a mutex, whose key expires with its lease.
   */
  recheckMs: number | null;
  /** Date.now() when the reply arrived. */
  readAt: number;
}

/** What a mutex's key location says about it, before its hash is read. */
interface Located {
  key: string;
  resource: string;
  readAt: number;
}

const isCount = (n: number) => Number.isSafeInteger(n) && n > 0;
const byOwner = (a: RawHolder, b: RawHolder) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0);

/** A mutex hash `owner → re-entry count` (plus marks). Null when no owner holds it. */
export function parseMutex(
  at: Located,
  hash: unknown,
  pttl: unknown,
  fence: unknown,
  queued: unknown,
): RawLock | null {
  const owners: RawHolder[] = [];
  for (const [field, value] of Object.entries((hash ?? {}) as Record<string, string>)) {
    const count = Number(value);
    // Anything else written into a lock key (by hand, by another tool) is not an owner.
    if (!MARK_FIELDS.has(field) && isCount(count)) owners.push({ owner: field, count, mode: "exclusive" });
  }
  if (owners.length === 0) return null;
  return {
    ...at,
    kind: "mutex",
    owners: owners.sort(byOwner),
    pttlMs: Number(pttl),
    token: fence === null || fence === undefined ? null : Number(fence),
    waiters: Number(queued ?? 0),
    permits: null,
    writerWaitsMs: 0,
    recheckMs: null,
  };
}

const HOLDER = /^(\d+)\|(\d+)\|(\d+)\|(\d+)$/;

/**
 * A semaphore or read-write hash (the library's shared-body.ts): `<owner> → "reads|writes|expiresAtMs|token"`
 * plus `~permits`, `~waiters`, `~writer-waits`. A holder whose lease ended by Redis's clock (`redisNowMs`) is
 * dead even while its field remains; null when no live holder is left.
 */
export function parseShared(
  kind: Exclude<LockKind, "mutex">,
  at: Located,
  hash: unknown,
  pttl: unknown,
  redisNowMs: number,
): RawLock | null {
  const owners: RawHolder[] = [];
  let permits: number | null = null;
  let writerWaitsUntil = 0;
  let waiting = false;
  let token: number | null = null;
  let firstEnd = Number.POSITIVE_INFINITY;
  for (const [field, value] of Object.entries((hash ?? {}) as Record<string, string>)) {
    if (field === "~permits") permits = isCount(Number(value)) ? Number(value) : null;
    else if (field === "~writer-waits") writerWaitsUntil = Number(value) || 0;
    else if (field === "~waiters") waiting = true;
    else {
      const m = HOLDER.exec(value);
      if (!m) continue;
      const [reads, writes, ends, grant] = m.slice(1).map(Number) as [number, number, number, number];
      if (ends <= redisNowMs || reads + writes === 0) continue;
      const mode: HoldMode = kind === "semaphore" ? "permit" : writes > 0 ? "write" : "read";
      owners.push({ owner: field, count: reads + writes, mode });
      token = Math.max(token ?? 0, grant);
      firstEnd = Math.min(firstEnd, ends);
    }
  }
  if (owners.length === 0) return null;
  const writerWaitsMs = kind === "read-write" ? Math.max(0, writerWaitsUntil - redisNowMs) : 0;
  const pttlMs = Number(pttl);
  const recheck = Math.min(
    firstEnd - redisNowMs,
    writerWaitsMs > 0 ? writerWaitsMs : Number.POSITIVE_INFINITY,
  );
  return {
    ...at,
    kind,
    owners: owners.sort(byOwner),
    pttlMs,
    token,
    waiters: waiting ? 1 : 0,
    permits: kind === "semaphore" ? permits : null,
    writerWaitsMs,
    // The key's own expiry already makes the observer look (and its events do): only sooner ends need a timer.
    recheckMs: pttlMs >= 0 && recheck >= pttlMs ? null : recheck,
  };
}

/** Redis TIME (`[seconds, microseconds]`) in ms, as the lock scripts compute it. */
export function timeMs(reply: unknown): number {
  const [s, us] = reply as [string, string];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}
