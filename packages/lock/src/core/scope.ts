import { AsyncLocalStorage } from "node:async_hooks";

/** What re-entry needs to know of the enclosing withLock's handle. */
export interface ScopedHandle {
  readonly owner: string;
  /** Held right now: not released, not lost. */
  readonly live: boolean;
}

/**
 * The withLock scope: resource → the enclosing withLock's live handle. Created on the first withLock, so
 * plain acquire/release never touch AsyncLocalStorage.
 *
 * The handle, not just its owner id, is kept because AsyncLocalStorage follows every piece of work started
 * inside the scope (timers, detached promises, listeners), including work that runs after withLock returned.
 * Such work must not "re-enter" a lock its scope no longer holds: it acquires afresh, as an outsider.
 * Concurrent children of one live scope do re-enter, and so run together under the one lock: the lock keeps
 * out other owners, not the holder's own concurrent work (as with Redisson's per-thread re-entry).
 */
export class Scope {
  private als: AsyncLocalStorage<ReadonlyMap<string, ScopedHandle>> | undefined;

  ownerOf(resource: string): string | undefined {
    const h = this.als?.getStore()?.get(resource);
    return h?.live ? h.owner : undefined;
  }

  run<T>(resource: string, handle: ScopedHandle, fn: () => T): T {
    this.als ??= new AsyncLocalStorage();
    const store = new Map(this.als.getStore());
    store.set(resource, handle);
    return this.als.run(store, fn);
  }
}
