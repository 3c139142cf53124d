import type { LockInfo } from "@lockyard/lock";
import type { LockKind, LockOwnerView, LockStore, LockView } from "../types.js";
import type { RawHolder, RawLock } from "./parse.js";

/** A held lock as the observer keeps it: its expiry as a wall-clock time, so any event can state its TTL. */
export interface Entry {
  store: LockStore;
  key: string;
  kind: LockKind;
  resource: string;
  owners: LockOwnerView[];
  token: number | null;
  waiters: number;
  /** A semaphore's permit count (null for the other kinds). */
  permits: number | null;
  /** Epoch ms until which a waiting writer keeps new readers out (read-write locks; null: none waits). */
  writerWaitsUntil: number | null;
  leaseMs: number | null;
  /** Epoch ms when the lock expires; null when it has no TTL. */
  expiresAt: number | null;
  /** Epoch ms when a holder's lease or the writer mark ends before the key does: read it again then. */
  recheckAt: number | null;
}

/**
 * A renewal moves the expiry by a third of the lease; less than this is read jitter, not a change. A full scan's
 * pages wait longer for the event loop, so a scan is allowed more (it only catches what events missed).
 */
export const RENEWAL_SLACK_MS = 50;
export const SCAN_SLACK_MS = 1_000;

/** Owner ids are `<instanceId>:<random hex>`; the prefix says which process holds the lock. */
export function ownerInstance(owner: string): string {
  const i = owner.lastIndexOf(":");
  return i > 0 ? owner.slice(0, i) : owner;
}

const owners = (list: readonly RawHolder[]): LockOwnerView[] =>
  list.map((o) => ({ owner: o.owner, count: o.count, instanceId: ownerInstance(o.owner), mode: o.mode }));
const exclusive = (list: readonly { owner: string; count: number }[]): RawHolder[] =>
  list.map((o) => ({ owner: o.owner, count: o.count, mode: "exclusive" }));

/** Store and key: unique among the observer's entries (control characters never appear in keys). */
export const entryId = (store: LockStore, key: string): string => `${store}\u0000${key}`;

export function entryOfRaw(raw: RawLock, leaseMs: number | null): Entry {
  return {
    store: "redis",
    key: raw.key,
    kind: raw.kind,
    resource: raw.resource,
    owners: owners(raw.owners),
    token: raw.token,
    waiters: raw.waiters,
    permits: raw.permits,
    writerWaitsUntil: raw.writerWaitsMs > 0 ? raw.readAt + raw.writerWaitsMs : null,
    leaseMs,
    expiresAt: raw.pttlMs >= 0 ? raw.readAt + raw.pttlMs : null,
    recheckAt: raw.recheckMs === null ? null : raw.readAt + raw.recheckMs,
  };
}

/** A lock of a store that only lists its locks (Redlock, PostgreSQL): always a mutex. */
export function entryOfInfo(info: LockInfo, store: LockStore, now: number): Entry {
  return {
    store,
    key: info.key,
    kind: "mutex",
    resource: info.resource,
    owners: owners(exclusive(info.owners)),
    token: info.token ?? null,
    waiters: 0,
    permits: null,
    writerWaitsUntil: null,
    leaseMs: info.leaseMs ?? null,
    expiresAt: info.pttlMs >= 0 ? now + info.pttlMs : null,
    recheckAt: null,
  };
}

/**
 * A lock known only from its event: taken, and gone again before the observer's read (it ran late). No owner
 * and no time left: a subscriber learns that it was held, not by whom.
 */
export function fleetingEntry(key: string, kind: LockKind, resource: string, at: number): Entry {
  return {
    store: "redis",
    key,
    kind,
    resource,
    owners: [],
    token: null,
    waiters: 0,
    permits: null,
    writerWaitsUntil: null,
    leaseMs: null,
    expiresAt: at,
    recheckAt: null,
  };
}

export function viewOf(e: Entry, at: number): LockView {
  return {
    store: e.store,
    key: e.key,
    kind: e.kind,
    permits: e.kind === "semaphore" ? { used: e.owners.length, total: e.permits } : null,
    readWrite:
      e.kind === "read-write"
        ? {
            readers: e.owners.filter((o) => o.mode === "read").length,
            writer: e.owners.find((o) => o.mode === "write")?.owner ?? null,
            writerWaiting: e.writerWaitsUntil !== null && e.writerWaitsUntil > at,
          }
        : null,
    resource: e.resource,
    owners: e.owners,
    pttlMs: e.expiresAt === null ? -1 : Math.max(0, Math.round(e.expiresAt - at)),
    leaseMs: e.leaseMs,
    token: e.token,
    waiters: e.waiters,
  };
}

/**
 * Whether a dashboard would show `b` differently from `a`: owners, their counts and modes, token, waiters,
 * permits, a writer starting or ceasing to wait, or a renewed lease.
 */
export function differs(a: Entry, b: Entry, slackMs = RENEWAL_SLACK_MS): boolean {
  if (a.token !== b.token || a.waiters !== b.waiters || a.owners.length !== b.owners.length) return true;
  if (a.kind !== b.kind || a.permits !== b.permits) return true;
  if ((a.writerWaitsUntil === null) !== (b.writerWaitsUntil === null)) return true;
  for (let i = 0; i < a.owners.length; i++) {
    const [x, y] = [a.owners[i]!, b.owners[i]!];
    if (x.owner !== y.owner || x.count !== y.count || x.mode !== y.mode) return true;
  }
  if ((a.expiresAt === null) !== (b.expiresAt === null)) return true;
  return a.expiresAt !== null && Math.abs(a.expiresAt - b.expiresAt!) > slackMs;
}

export function byResource(
  a: { resource: string; store: string },
  b: { resource: string; store: string },
): number {
  if (a.resource !== b.resource) return a.resource < b.resource ? -1 : 1;
  return a.store < b.store ? -1 : a.store > b.store ? 1 : 0;
}

/** What one update changed. */
export interface Change {
  added: Entry[];
  changed: Entry[];
  removed: Entry[];
}

export const emptyChange = (): Change => ({ added: [], changed: [], removed: [] });
export const isEmpty = (c: Change): boolean => !c.added.length && !c.changed.length && !c.removed.length;
