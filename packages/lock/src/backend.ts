import type { ChainableCommander } from "ioredis";
import type { LockInfo } from "./types.js";

/**
 * What the shared core (handles, watchdog, waiter FIFO, lost-lock logic) needs from a store.
 * The single-Redis/Cluster backend lives in redis-backend.ts; Redlock and PostgreSQL implement the same.
 * Replies are plain tuples so the hot path allocates nothing beyond what the client already made.
 */
export interface LockBackend {
  /** [1, count, token] acquired or re-entered; [0, pttlMs] held by another owner (the attempt marks a waiter). */
  acquire(
    resource: string,
    key: string,
    owner: string,
    leaseMs: number,
    moreWaiters: boolean,
  ): Promise<AcquireReply>;
  renew(key: string, owner: string, leaseMs: number): Promise<boolean>;
  /** One answer per item, in order. Batches as few calls as the store allows. */
  renewMany(items: readonly RenewItem[]): Promise<boolean[]>;
  /** [0] not-owner; [1, left] decremented; [2] released. */
  release(resource: string, key: string, owner: string, leaseMs: number): Promise<ReleaseReply>;
  /**
   * Optional: queues the release as the last command of the caller's pipeline and sends it, so the caller's
   * commands and the release cost one round trip. Returns undefined (nothing sent) when this pipeline cannot
   * carry it; the handle then sends the pipeline and the release one after the other.
   */
  releaseIn?(
    pipeline: ChainableCommander,
    resource: string,
    key: string,
    owner: string,
    leaseMs: number,
  ): Promise<{ reply: ReleaseReply; replies: PipelineReplies }> | undefined;
  list(match: string, count: number, limit: number): Promise<Omit<LockInfo, "leaseMs">[]>;
  /** A subscriber to release notifications; made lazily, on first contention. */
  createSubscriber(onRelease: (resource: string) => void): ReleaseSubscriber;
  /** Sub-classes of backend may hold connections of their own; the user's connections stay open. */
  close(): Promise<void>;
  /**
   * Optional: how much of a lease the holder may not count on (Redlock's clock-drift allowance).
   * The local deadline becomes `sentAt + leaseMs - validityMarginMs(leaseMs)`. Default 0.
   */
  validityMarginMs?(leaseMs: number): number;
}

export type AcquireReply = [1, number, number | null] | [0, number];
export type ReleaseReply = [0 | 1 | 2, number?];

/** What ioredis's pipeline.exec() answers: one [error, reply] per command, in order. */
export type PipelineReplies = [error: Error | null, reply: unknown][];

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
