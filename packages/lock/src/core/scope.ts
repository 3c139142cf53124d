import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The withLock scope: resource → owner of the enclosing withLock. Created on the first withLock, so plain
 * acquire/release never touch AsyncLocalStorage.
 */
export class Scope {
  private als: AsyncLocalStorage<ReadonlyMap<string, string>> | undefined;

  ownerOf(resource: string): string | undefined {
    return this.als?.getStore()?.get(resource);
  }

  run<T>(resource: string, owner: string, fn: () => T): T {
    this.als ??= new AsyncLocalStorage();
    const store = new Map(this.als.getStore());
    store.set(resource, owner);
    return this.als.run(store, fn);
  }
}
