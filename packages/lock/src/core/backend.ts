import type { LockInfo } from "../types.js";

/**
 * What the shared core (handles, watchdog, waiter FIFO, lost-lock logic) needs from a store.
 * The single-Redis/Cluster backend lives in redis-backend.ts; Redlock and PostgreSQL implement the same.
 * Replies are plain tuples so the hot path allocates nothing beyond what the client already made.
 */
export interface LockBackend {
  /** [1, count, token] acquired or re-entered; [0, pttlMs, fence?] held by another owner (the attempt marks a waiter). */
  acquire(
    resource: string,
    key: string,
    owner: string,
    leaseMs: number,
    moreWaiters: boolean,
    /** Only when `canRead`: commands to send right after the attempt, in the same round trip where possible. */
    reads?: ReadsFn,
    /**
     * Only when `handsOver`: a waiting acquire whose owner name is its own (never a re-entry). Refused, it
     * joins the store's waiter queue (or keeps its place); finding the lock handed to it, it adopts it.
     */
    join?: boolean,
  ): Promise<AcquireReply>;
  /**
   * True when the store keeps a queue of waiting processes and a release hands the lock to its head (or to
   * the releasing process's `next` waiter) in the same operation: see redis/scripts/queue.ts.
   */
  readonly handsOver?: boolean;
  /**
   * True when the store keeps a queue of waiting processes without handing over (the semaphore's fair
   * admission): waiting acquires `join` it and a waiter that gives up `leave`s it. Implied by `handsOver`.
   */
  readonly queues?: boolean;
  /** Only when `handsOver` or `queues`: a queued waiter gave up; `successor` takes its place (or the lock, if handed). */
  leave?(
    resource: string,
    key: string,
    owner: string,
    successor: NextWaiter | undefined,
  ): Promise<ReleaseReply>;
  /**
   * A waiter that gave up after a refusal takes back what its refusals left in the store to keep others out
   * (the read-write lock's writer mark); a no-op when someone else's refusal left it since.
   */
  withdraw?(resource: string, key: string, owner: string): Promise<void>;
  /**
   * True when several owners may hold the lock at once (semaphore permits, read holds): a waiter that is
   * granted lets the next local waiter try at once instead of waiting for a release.
   */
  readonly shared?: boolean;
  /** True when acquire() can carry `reads` (AcquireOptions.reads); the core refuses that option otherwise. */
  readonly canRead?: boolean;
  renew(key: string, owner: string, leaseMs: number): Promise<boolean>;
  /**
   * One answer per item, in order. Batches as few calls as the store allows. `undefined`: not decided yet
   * (Redlock: too few nodes answered for that lock while others of the batch are decided), as if the call
   * had failed for that item alone.
   */
  renewMany(items: readonly RenewItem[]): Promise<(boolean | undefined)[]>;
  /**
   * See ReleaseReply. `token`: the token the hold was granted with (null when unknown); a store that keeps
   * tokens answers not-owner when the key was granted afresh since.
   */
  release(
    resource: string,
    key: string,
    owner: string,
    leaseMs: number,
    token: number | null,
    listener?: ReleaseListener,
    /** When `handsOver` or `queues`: this process's next waiter, granted the lock (a permit) when nobody queues ahead of it. */
    next?: NextWaiter,
  ): Promise<ReleaseReply>;
  /**
   * Optional (Redis stores): issues the caller's write, then the release, so that Redis runs the write while
   * the lock is held; on one connection both go out in one socket write. The release is sent whatever
   * becomes of the write.
   */
  releaseAfter?<T>(
    write: WriteFn<T>,
    resource: string,
    key: string,
    owner: string,
    leaseMs: number,
    token: number | null,
    listener?: ReleaseListener,
    next?: NextWaiter,
  ): { reply: Promise<ReleaseReply>; write: Promise<PromiseSettledResult<T>> };
  /**
   * Optional: true when a failed call never got an answer from the store (connection-class error), so a
   * failed release is retried in the background until the lease would have ended (late-release.ts).
   */
  noReply?(err: unknown): boolean;
  /**
   * Optional: true when the store refused an acquire without running any of it (PostgreSQL's lock or statement
   * timeout, a deadlock): nothing changed, so a waiting acquire tries again within `waitMs` instead of failing,
   * and nothing is released or withdrawn for it. Takes precedence over `noReply` on the acquire path.
   */
  refused?(err: unknown): boolean;
  list(match: string, count: number, limit: number): Promise<Omit<LockInfo, "leaseMs">[]>;
  /** A subscriber to release notifications; made lazily, on first contention. */
  createSubscriber(onRelease: OnReleaseMessage, onResubscribed?: () => void): ReleaseSubscriber;
  /** Sub-classes of backend may hold connections of their own; the user's connections stay open. */
  close(): Promise<void>;
  /** Optional: sends calls the backend holds for a batch now, so they go out before close() returns. */
  flush?(): void;
  /**
   * Optional: how much of a lease the holder may not count on (Redlock's clock-drift allowance).
   * The local deadline becomes `sentAt + leaseMs - validityMarginMs(leaseMs)`. Default 0.
   */
  validityMarginMs?(leaseMs: number): number;
}

/**
 * A success carries the promise of the attempt's `reads`, when it had some. A refusal may say the last token the
 * store had issued when it ran (stores that hand over): a handoff announced with a greater token ran after it.
 */
export type AcquireReply = [1, number, number | null, Promise<unknown>?] | [0, number, number?];
/**
 * Read-only commands a store issues right after an acquire attempt. The core never calls it: it only passes
 * it to the store, so the client type is the store's business (`never` here; the Redis store's public type
 * is `(redis: Redis | Cluster, lock) => Promise<unknown>`, see types.ts).
 */
export type ReadsFn = (client: never, lock: LockKeys) => Promise<unknown>;

/** The keys and owner of the lock an attempt is for: what a fenced read needs to register its token. */
export interface LockKeys {
  key: string;
  fence: string;
  owner: string;
}
/** A write a store issues right before a release (the client type is the store's business, as for ReadsFn). */
export type WriteFn<T> = (client: never) => Promise<T>;
/**
 * [0] not-owner; [1, left] decremented; [2] released; [3, token] released and handed to another process's
 * queued waiter; [4, token, reads?, waited?, free?, others?] released and granted to the `next` (or `successor`)
 * waiter given, where a mutex's release says how long the first other process's queued waiter had waited (ms; -1
 * none queued) and how many other processes' waiters queue, and a semaphore's how many permits are still free after
 * the grant.
 */
export type ReleaseReply =
  | [0 | 1 | 2, number?]
  | [3, number]
  | [4, number, Promise<unknown>?, number?, number?, number?];

/**
 * A release message: `message` is `c:<owner> <token> <claimMs>` when the lock was handed to that owner's waiter
 * (see redis/scripts/queue.ts and by-message.ts); anything else announces a free lock (an older version's `h:<owner>`
 * included: the head looks, and adopts it).
 */
export type OnReleaseMessage = (resource: string, message?: string) => void;

/** A waiter of the releasing process that a handoff may grant the lock to. */
export interface NextWaiter {
  owner: string;
  leaseMs: number;
  reads: ReadsFn | undefined;
  /**
   * Grant it to this waiter even when other processes' waiters queue, while the first of them has queued for
   * less than this many ms (a bounded local streak; see CommonLocksOptions.localStreak).
   */
  keepMs: number;
}
/**
 * Hears a release's answer where the store delivers it. A store whose commands share one ordered connection
 * (the single Redis) calls it before it delivers the answer of any command sent later, so the "released"
 * event the core emits here precedes the next owner's grant; other stores may skip it (the core then hears
 * the answer from the returned promise).
 */
export interface ReleaseListener {
  releaseReplied(reply: ReleaseReply): void;
}

export interface RenewItem {
  key: string;
  owner: string;
  leaseMs: number;
}

export interface ReleaseSubscriber {
  /** Resolves once release messages for the resource are delivered. */
  subscribe(resource: string): Promise<void>;
  unsubscribe(resource: string): void;
  close(): Promise<void>;
}
