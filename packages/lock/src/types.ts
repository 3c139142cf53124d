import type { ChainableCommander } from "ioredis";
import type { PipelineReplies } from "./backend.js";
import type { LockEvent } from "./events.js";

export type ReleaseResult = "released" | "decremented" | "not-owner";

/** What `releaseWith` answers: the release's result and the [error, reply] of each of your commands. */
export interface ReleasedWith {
  result: ReleaseResult;
  replies: PipelineReplies;
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
}

export interface RetryOptions {
  /** Longest sleep before a waiter retries without a release message (it sleeps min(pttl, maxMs)). Default 500. */
  maxMs?: number;
  /** Shortest such sleep, so an almost expired lock does not cause a busy loop. Default 5. */
  minMs?: number;
  /** Random extra sleep in [0, jitterMs), so waiters of many processes do not retry in lock-step. Default 20. */
  jitterMs?: number;
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
  /** True until released or lost (including when the local deadline has passed). */
  isHeld(): boolean;
  /** Renews the lease now. Resolves false (and the handle becomes lost) when the owner no longer holds it. */
  renew(): Promise<boolean>;
  release(): Promise<ReleaseResult>;
  /**
   * Sends your ioredis `pipeline` (e.g. the guarded write) with this release queued after it. On a single Redis,
   * when the pipeline comes from the lock's own connection, that is one round trip; otherwise (a Cluster,
   * another connection, Redlock, PostgreSQL) the pipeline is sent first and the release after it. Your commands
   * run while the lock is held; each one's error is in `replies`, never hiding the release. Rejects only when
   * the pipeline could not be sent at all (the release is still attempted) or the release itself failed.
   */
  releaseWith(pipeline: ChainableCommander): Promise<ReleasedWith>;
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
  /** First part of owner ids `<instanceId>:<128-bit hex>`. Default `hostname:pid`. */
  instanceId?: string;
  /** Called synchronously for every event; exceptions it throws are ignored. */
  onEvent?: (event: LockEvent) => void;
}
