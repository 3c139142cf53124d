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

export interface LockOwnerInfo {
  owner: string;
  /** Its hold count: re-entries of a mutex or a semaphore permit, reads + writes of a read-write lock. */
  count: number;
  /** Read-write locks only: "write" when the owner holds the write side (perhaps with reads), else "read". */
  mode?: "read" | "write";
}

export interface LockInfo {
  key: string;
  resource: string;
  owners: LockOwnerInfo[];
  /** Semaphores only: the permit count the last acquire gave. */
  permits?: number;
  /**
   * Redis mutexes and semaphores: how many processes queue for it in Redis (one entry per process, whatever
   * its number of waiting calls; a crashed process's entry counts until the next look at the queue drops it).
   * Absent where the store keeps no queue (read-write locks, Redlock, PostgreSQL).
   */
  waiting?: number;
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
  /**
   * Which kind of lock to list. Default "mutex". "semaphore" and "read-write" on Redis stores only (Redlock and
   * PostgreSQL have neither: InvalidOptionError).
   */
  kind?: ListKind;
}

export type ListKind = "mutex" | "semaphore" | "read-write";

/**
 * Several locks taken together (`locks.acquire(["a", "b"])`): all or none, in one order every process
 * shares (names sorted), so two overlapping sets never deadlock. Each lock keeps its own watchdog and token.
 */
export interface MultiLockHandle extends AsyncDisposable {
  /** The resources, distinct, in the order they were taken. */
  readonly resources: readonly string[];
  /** One handle per resource, same order. */
  readonly handles: readonly LockHandle[];
  /** Each lock's fencing token, same order. */
  readonly tokens: readonly (number | null)[];
  /** Aborts with the LockLostError of the first lock lost. */
  readonly signal: AbortSignal;
  /** True while every lock is held. */
  isHeld(): boolean;
  /** Renews every lock now; false when any is no longer held. */
  renew(): Promise<boolean>;
  /** Releases every lock, last taken first: "released", or "not-owner" when any had been lost. */
  release(): Promise<ReleaseResult>;
}

export interface Locks {
  // The array forms come first so that ReturnType<Locks["acquire"]> (the last overload) stays LockHandle.
  /** All of `resources` or none (see MultiLockHandle); `waitMs` bounds the whole acquisition. */
  acquire(resources: readonly string[], opts?: AcquireOptions): Promise<MultiLockHandle>;
  acquire(resource: string, opts?: AcquireOptions): Promise<LockHandle>;
  tryAcquire(
    resources: readonly string[],
    opts?: Omit<AcquireOptions, "waitMs">,
  ): Promise<MultiLockHandle | null>;
  tryAcquire(resource: string, opts?: Omit<AcquireOptions, "waitMs">): Promise<LockHandle | null>;
  withLock<T>(
    resources: readonly string[],
    fn: (locks: MultiLockHandle) => Promise<T> | T,
    opts?: AcquireOptions,
  ): Promise<T>;
  withLock<T>(resource: string, fn: (lock: LockHandle) => Promise<T> | T, opts?: AcquireOptions): Promise<T>;
  list(opts?: ListOptions): Promise<LockInfo[]>;
  /** Stops the watchdog and waiters and closes the subscriber. Held locks are not released: they expire. */
  close(): Promise<void>;
}

/** See CommonLocksOptions.localHandoff. */
export type LocalHandoff = "early" | "confirmed";
/** See CommonLocksOptions.handoffAdoption. */
export type HandoffAdoption = "message" | "attempt";

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
   * other processes queue for it (a handoff within a process costs no message and no wake-up). Default 4.
   * Beyond that, see localStreakMs. Only on Redis stores (Redlock and PostgreSQL do not queue).
   */
  localStreak?: number;
  /**
   * After `localStreak` local handoffs in a row, a release still hands the lock to a waiter of its own process
   * while the first waiting process has queued for less than its time slice: this many ms (Redis time) divided
   * by the number of processes queued, as the last release that kept the lock said. Short holds then pay for a
   * cross-process handoff rarely. With two processes a turn lasts about this long; with more, the first waiting
   * process has usually queued past its slice when a turn starts (it waited through the turns before), and
   * `localStreak` decides. Default 20 (the default retry jitter).
   * `localStreak: 0, localStreakMs: 0`: strict arrival order across processes.
   */
  localStreakMs?: number;
  /**
   * When a release hands the lock to a waiter of its own process (Redis stores): "early" (default) lets that
   * waiter start as the release is sent, without waiting for Redis's answer, whenever the answer is certain:
   * the releasing hold is live with a known token and its own owner name, and the streak rules keep the lock in
   * this process (decided as the release is sent, from what the previous release said of other processes'
   * waiters). The new holder's token is the releasing hold's + 1; until the answer comes its handle is held
   * under the releasing hold's deadline, and if Redis did not grant it (the lock had been lost) or no answer
   * comes it is lost at once (reason `handoff-refused`). Redis names the new owner once that release runs:
   * `fencedRead` waits for it, a script of yours that checks the owner in the lock's hash does not.
   * "confirmed": it starts once the answer is in (one round trip later), and `isHeld()` is never true before
   * Redis has granted it.
   */
  localHandoff?: LocalHandoff;
  /**
   * When another process's release hands the lock to a waiter of this process (Redis stores): "message" (default)
   * lets that waiter start from the handoff message, without an attempt of its own, whenever it can show the
   * store's claim on it is live: a refusal it heard saw a lower fencing token than the message's, so the handoff
   * ran after that refused call was sent, and the claim lease (the holder's `retry.queueLeaseMs`) lasts at least
   * that long from then. Its handle holds under that bound until the watchdog's first renewal, which runs halfway
   * there. Waiters with an explicit `leaseMs` or `reads` adopt with an attempt. "attempt": every handoff is
   * adopted with an attempt (one round trip more).
   */
  handoffAdoption?: HandoffAdoption;
  /** First part of owner ids `<instanceId>:<128-bit hex>`. Default `hostname:pid`. */
  instanceId?: string;
  /** Called synchronously for every event; exceptions it throws are ignored. */
  onEvent?: (event: LockEvent) => void;
}

/** One named lock of a kind (a semaphore, the read or the write side of a read-write lock), bound to its name. */
export interface ResourceLock {
  readonly resource: string;
  acquire(opts?: AcquireOptions): Promise<LockHandle>;
  tryAcquire(opts?: Omit<AcquireOptions, "waitMs">): Promise<LockHandle | null>;
  withLock<T>(fn: (lock: LockHandle) => Promise<T> | T, opts?: AcquireOptions): Promise<T>;
}

/**
 * At most `permits` holders at once; each acquire takes one permit, a lease of its own renewed by the
 * watchdog (a crashed holder's permit comes back when its lease ends). Re-entry within `withLock` (or with
 * `owner`) re-enters the same permit. Keys: `<prefix>semaphore:{name}` (redis/scripts/shared-body.ts).
 */
export interface Semaphore extends ResourceLock {
  readonly permits: number;
}

/**
 * Many readers or one writer. A refused writer keeps new readers out (for one queue lease, renewed while it
 * waits), so a stream of readers cannot starve it. The writer may re-enter as reader (inside its `withLock`,
 * or with `owner: writeHandle.owner`); a reader may take the write lock only while it is the sole holder.
 * Keys: `<prefix>rw:{name}`.
 */
export interface ReadWriteLock {
  readonly resource: string;
  readonly read: ResourceLock;
  readonly write: ResourceLock;
}

/** Locks on a single Redis or a Cluster: the mutex, plus semaphores and read-write locks on the same core. */
export interface RedisLocks extends Locks {
  /** The semaphore `resource` with `permits` permits (1-10 000): every caller of a name should agree on it. */
  semaphore(resource: string, permits: number): Semaphore;
  readWrite(resource: string): ReadWriteLock;
}
