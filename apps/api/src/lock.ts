// TEMPORARY: mirrors the DESIGN §4 surface of @lockyard/lock until its dist exists; replaced by re-exports.
import type { Redis } from "ioredis";

export interface LockHandle {
  resource: string;
  key: string;
  owner: string;
  token: number | null;
  count: number;
  signal: AbortSignal;
  isHeld(): boolean;
  renew(): Promise<boolean>;
  release(): Promise<"released" | "decremented" | "not-owner">;
}
export interface AcquireOptions {
  leaseMs?: number;
  waitMs?: number;
  owner?: string;
  signal?: AbortSignal;
}
export interface LockInfo {
  key: string;
  resource: string;
  owners: { owner: string; count: number }[];
  pttlMs: number;
  leaseMs?: number;
  token?: number;
}
export interface Locks {
  acquire(resource: string, opts?: AcquireOptions): Promise<LockHandle>;
  tryAcquire(resource: string, opts?: AcquireOptions): Promise<LockHandle | null>;
  withLock<T>(resource: string, fn: (lock: LockHandle) => Promise<T>, opts?: AcquireOptions): Promise<T>;
  list(opts?: { match?: string; count?: number }): Promise<LockInfo[]>;
  close(): Promise<void>;
}
export type FencedWrite = (redis: Redis, stockKey: string, token: number, delta: number) => Promise<unknown>;
