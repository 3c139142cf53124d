import type { RouterOutputs } from "@lockyard/api";

type ApiLockView = RouterOutputs["locks"]["list"]["locks"][number];

/** A lock as the API describes it. `waiters` (how many are queued for it) arrives with the delta stream. */
export type LockView = Omit<ApiLockView, "waiters"> & { waiters?: number };

/** A lock in the browser: its row id and when its `pttlMs` was observed, to count down from. */
export interface LiveLock extends LockView {
  /** `${store}:${key}`: a Redis lock and a PostgreSQL lock on one resource share a key name. */
  id: string;
  /** `performance.now()` when `pttlMs` was observed. */
  receivedAt: number;
}

/**
 * What `locks.watch` yields: a snapshot, then deltas, with heartbeats while nothing changes. Until the
 * API sends `kind`, every message is a full `{ at, instanceId, locks }` snapshot.
 */
export type WatchEvent =
  | { kind: "snapshot"; at: number; instanceId: string; locks: readonly LockView[] }
  | {
      kind: "delta";
      at: number;
      instanceId: string;
      added: readonly LockView[];
      changed: readonly LockView[];
      removed: readonly string[];
    }
  | { kind: "heartbeat"; at: number }
  | { kind?: undefined; at: number; instanceId: string; locks: readonly LockView[] };

export interface LockState {
  /** The instance whose snapshot the state is built on; deltas from another are ignored. */
  instanceId: string | null;
  /** Every held lock by id. Unchanged locks keep their object identity across events. */
  locks: ReadonlyMap<string, LiveLock>;
}

export const EMPTY_LOCK_STATE: LockState = { instanceId: null, locks: new Map() };

/** A TTL within this much of the countdown's prediction is the same lease, not a renewal. */
export const TTL_SLACK_MS = 40;

export function lockId(l: Pick<LockView, "store" | "key">): string {
  return `${l.store}:${l.key}`;
}

/** Same kind, and the same permits or readers/writer/waiting writer: what a row shows beside its holders. */
function sameKind(a: LockView, b: LockView): boolean {
  return (
    a.kind === b.kind &&
    a.permits?.used === b.permits?.used &&
    a.permits?.total === b.permits?.total &&
    a.readWrite?.readers === b.readWrite?.readers &&
    a.readWrite?.writer === b.readWrite?.writer &&
    a.readWrite?.writerWaiting === b.readWrite?.writerWaiting
  );
}

function sameHolding(a: LockView, b: LockView): boolean {
  if (
    a.resource !== b.resource ||
    a.token !== b.token ||
    a.leaseMs !== b.leaseMs ||
    a.waiters !== b.waiters ||
    a.owners.length !== b.owners.length ||
    !sameKind(a, b)
  )
    return false;
  return a.owners.every((o, i) => {
    const p = b.owners[i];
    return (
      p !== undefined &&
      p.owner === o.owner &&
      p.count === o.count &&
      p.instanceId === o.instanceId &&
      p.mode === o.mode
    );
  });
}

/** True when `next` says what `prev` already predicts: same holders, and a TTL on the same countdown. */
function unchanged(prev: LiveLock, next: LockView, now: number): boolean {
  if (!sameHolding(prev, next)) return false;
  if (prev.pttlMs < 0 || next.pttlMs < 0) return prev.pttlMs === next.pttlMs;
  const predicted = prev.pttlMs - (now - prev.receivedAt);
  return Math.abs(next.pttlMs - predicted) <= TTL_SLACK_MS;
}

function live(l: LockView, now: number): LiveLock {
  return { ...l, id: lockId(l), receivedAt: now };
}

function fromSnapshot(
  state: LockState,
  instanceId: string,
  locks: readonly LockView[],
  now: number,
): LockState {
  const next = new Map<string, LiveLock>();
  let same = state.instanceId === instanceId && state.locks.size === locks.length;
  for (const l of locks) {
    const id = lockId(l);
    const prev = state.locks.get(id);
    if (prev && unchanged(prev, l, now)) next.set(id, prev);
    else {
      next.set(id, live(l, now));
      same = false;
    }
  }
  return same ? state : { instanceId, locks: next };
}

/**
 * Applies one `locks.watch` message. Pure: `now` is the `performance.now()` of its arrival. Returns
 * `state` itself when nothing a viewer could see changed, so React skips the render.
 */
export function reduceLocks(state: LockState, event: WatchEvent, now: number): LockState {
  switch (event.kind) {
    case "heartbeat":
      return state;
    case "delta": {
      if (state.instanceId !== event.instanceId) return state;
      if (event.added.length === 0 && event.changed.length === 0 && event.removed.length === 0) return state;
      const next = new Map(state.locks);
      if (event.removed.length > 0) {
        // Removals name the lock key, so every store's lock on it goes first; one still held in another
        // store comes back in `added`.
        const gone = new Set(event.removed);
        for (const [id, l] of next) if (gone.has(l.key)) next.delete(id);
      }
      for (const l of [...event.added, ...event.changed]) {
        const id = lockId(l);
        const prev = state.locks.get(id);
        next.set(id, prev && unchanged(prev, l, now) ? prev : live(l, now));
      }
      return { instanceId: state.instanceId, locks: next };
    }
    default:
      return fromSnapshot(state, event.instanceId, event.locks, now);
  }
}
