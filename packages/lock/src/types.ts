import type { LockKeys } from "./core/backend.js";
import type { RedisClient } from "./redis/scripts/index.js";

/** Read-only commands issued on the lock's own client right after an acquire attempt (the `reads` option). */
export type ReadsFn = (redis: RedisClient, lock: LockKeys) => Promise<unknown>;
/** A write issued on the lock's own client right before the release (`releaseAfter`). */
export type WriteFn<T> = (redis: RedisClient) => Promise<T>;

import type { LockEvent } from "./events.js";

export type ReleaseResult = "released" | "decremented" | "not-owner";

/** What `releaseAfter` answers: the release's result, and how your write settled. */
export interface ReleasedAfter<T> {
  result: ReleaseResult;
  write: PromiseSettledResult<T>;
}

export interface AcquireOptions {
  /** A fixed lease: no watchdog, the lock expires after it. Omit it to get the watchdog-renewed default lease. */
  leaseMs?: number;
  /** How long to wait for the lock. Defaults to the `waitMs` given to `createLocks`. */
  waitMs?: number;
  /** Re-enter as this owner. Inside a `withLock` scope the enclosing owner of the same resource is used. */
  owner?: string;
  /** Cancels the wait; the promise rejects with `signal.reason`. */
  signal?: AbortSignal;
  /**
   * Read-only commands issued on the lock's own client (the argument) right after each acquisition attempt,
   * e.g. `(r) => r.hget(key, "qty")`. Redis runs them after the grant, so they see the state under the lock;
   * on a single Redis they go out in the same socket write as the attempt (no extra round trip). The winning
   * attempt's promise is `handle.reads`. A failed attempt runs them too and drops the answer: never write here.
   * On a Cluster they are issued after the grant. Redis stores only (InvalidOptionError elsewhere).
   */
  reads?: ReadsFn;
}

export interface RetryOptions {
  /** Longest sleep before a waiter retries without a release message (it sleeps min(pttl, maxMs)). Default 500. */
  maxMs?: number;
  /** Shortest such sleep, so an almost expired lock does not cause a busy loop. Default 5. */
  minMs?: number;
  /** Random extra sleep in [0, jitterMs), so waiters of many processes do not retry in lock-step. Default 20. */
  jitterMs?: number;
  /**
   * How long a waiter's place in the Redis-side queue, and a lock handed to it, last unless the waiter comes
   * back (it looks at least three times per lease): a crashed waiter holds up the next one at most this long.
   * Default 3 × (maxMs + jitterMs).
   */
  queueLeaseMs?: number;
}

export interface LockHandle extends AsyncDisposable {
  readonly resource: string;
  readonly key: string;
  readonly owner: string;
  /** The fencing token: `fence:{resource}` after this owner's fresh acquisition. null where not monotonic (Redlock). */
  readonly token: number | null;
  /** The re-entry count right after this acquisition. */
  readonly count: number;
  /** Aborts with a LockLostError when the lock is lost. */
  readonly signal: AbortSignal;
  /** What the acquisition's `reads` option answered; undefined without it. */
  readonly reads: Promise<unknown> | undefined;
  /** True until released or lost (including when the local deadline has passed). */
  isHeld(): boolean;
  /** Renews the lease now. Resolves false (and the handle becomes lost) when the owner no longer holds it. */
  renew(): Promise<boolean>;
  release(): Promise<ReleaseResult>;
  /**
   * Issues `write` on the lock's own client (the argument), e.g. a fenced write, then this release: Redis runs
   * the write while the lock is held. On a single Redis both go out in one socket write (one round trip); on a
   * Cluster the release follows once the write has settled. The release is sent whatever the write does, and
   * the write's outcome comes back settled, so a failed write never hides the release. Redis stores only.
   */
  releaseAfter<T>(write: WriteFn<T>): Promise<ReleasedAfter<T>>;
}

export interface LockInfo {
  key: string;
  resource: string;
  owners: { owner: string; count: number }[];
  /** Remaining TTL in ms as Redis reported it. */
  pttlMs: number;
  /** The lease, when a handle of this Locks instance holds the lock. */
  leaseMs?: number;
  /** The current value of `fence:{resource}`. */
  token?: number;
}

export interface ListOptions {
  /** A glob over resource names (`*` and `?`), e.g. "stock:*". Default "*". */
  match?: string;
  /** SCAN COUNT hint per round trip. Default 100. */
  count?: number;
  /** Stop after this many locks. Default 10 000. */
  limit?: number;
}

export interface Locks {
  acquire(resource: string, opts?: AcquireOptions): Promise<LockHandle>;
  tryAcquire(resource: string, opts?: Omit<AcquireOptions, "waitMs">): Promise<LockHandle | null>;
  withLock<T>(resource: string, fn: (lock: LockHandle) => Promise<T> | T, opts?: AcquireOptions): Promise<T>;
  list(opts?: ListOptions): Promise<LockInfo[]>;
  /** Stops the watchdog and waiters and closes the subscriber. Held locks are not released: they expire. */
  close(): Promise<void>;
}

export interface CommonLocksOptions {
  /** Key prefix; keys are `<prefix>{<resource>}`. Default "lock:". */
  prefix?: string;
  /** Lease of watchdog-renewed locks (renewed every leaseMs/3). Default 30 000. */
  leaseMs?: number;
  /** Default wait of `acquire` and `withLock`. Default 5 000. */
  waitMs?: number;
  retry?: RetryOptions;
  /**
   * How many times in a row a release may hand the lock to a waiter of the same process while waiters of
   * other processes queue for it (a handoff within a process costs no message and no wake-up). 0: strict
   * arrival order across processes. Default 8. Only on Redis stores (Redlock and PostgreSQL do not queue).
   */
  localStreak?: number;
  /** First part of owner ids `<instanceId>:<128-bit hex>`. Default `hostname:pid`. */
  instanceId?: string;
  /** Called synchronously for every event; exceptions it throws are ignored. */
  onEvent?: (event: LockEvent) => void;
}
