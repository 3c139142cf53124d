// The public surface: what users of the lock call. Store authors import "@lockyard/lock/backend".
export type { LockKeys } from "./core/backend.js";
// Every error class (errors.ts exports nothing else).
export * from "./errors.js";
export type { LockEvent, LockEventType, LockKind } from "./events.js";
export { isConnectionError as isRedisUnavailable } from "./redis/connection-error.js";
export { createLocks, type LocksOptions } from "./redis/create-locks.js";
export {
  type FencedFields,
  type FencedReadResult,
  type FencedWriteResult,
  fencedRead,
  fencedWrite,
} from "./redis/fenced.js";
export { createRedlock, type RedlockOptions } from "./redlock/create-redlock.js";
export { fenceKey, isValidResource, lockKey, queueKeyOf, releaseChannel } from "./resource.js";
export type {
  AcquireOptions,
  CommonLocksOptions,
  HandoffAdoption,
  ListKind,
  ListOptions,
  LocalHandoff,
  LockHandle,
  LockInfo,
  LockOwnerInfo,
  Locks,
  MultiLockHandle,
  ReadsFn,
  ReadWriteLock,
  RedisLocks,
  ReleasedAfter,
  ReleaseResult,
  ResourceLock,
  RetryOptions,
  Semaphore,
  WriteFn,
} from "./types.js";
