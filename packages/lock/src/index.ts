export type {
  AcquireReply,
  LockBackend,
  ReadsFn,
  ReleaseReply,
  ReleaseSubscriber,
  RenewItem,
  WriteFn,
} from "./backend.js";
export {
  InvalidOptionError,
  InvalidResourceError,
  LockError,
  LockLostError,
  LockNotOwnedError,
  LockReleasedError,
  LocksClosedError,
  LockTimeoutError,
  type LostReason,
  QuorumError,
} from "./errors.js";
export type { LockEvent, LockEventType } from "./events.js";
export {
  type FencedFields,
  type FencedReadResult,
  type FencedWriteResult,
  fencedRead,
  fencedWrite,
} from "./fenced-write.js";
export { createLocks, createLocksWithBackend, type LocksOptions } from "./locks.js";
export { createRedlock, type RedlockOptions } from "./redlock.js";
export { fenceKey, isValidResource, lockKey, releaseChannel } from "./resource.js";
export { scripts } from "./scripts/index.js";
export type {
  AcquireOptions,
  CommonLocksOptions,
  ListOptions,
  LockHandle,
  LockInfo,
  Locks,
  ReleasedAfter,
  ReleaseResult,
  RetryOptions,
} from "./types.js";
