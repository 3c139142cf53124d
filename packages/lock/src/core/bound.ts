import type { Locks, ResourceLock } from "../types.js";

/** A Locks bound to one resource name: what a semaphore or one side of a read-write lock hands out. */
export function boundTo(locks: Locks, resource: string): ResourceLock {
  return {
    resource,
    acquire: (opts) => locks.acquire(resource, opts),
    tryAcquire: (opts) => locks.tryAcquire(resource, opts),
    withLock: (fn, opts) => locks.withLock(resource, fn, opts),
  };
}
