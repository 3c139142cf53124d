import type { Config } from "../config.js";
import type { LockBackend } from "../core/backend.js";
import { boundTo } from "../core/bound.js";
import { LocksCore } from "../core/locks-core.js";
import { Scope } from "../core/scope.js";
import type { SharedMode } from "../redis/scripts/index.js";
import { assertResource } from "../resource.js";
import type { ReadWriteLock } from "../types.js";

/**
 * The read-write locks of one Locks: a core per side over the same keys, created on first use. Both sides
 * share one withLock scope, so a read acquired inside the write side's withLock re-enters the writer's hold.
 */
export class ReadWriteLocks {
  private sides: { read: LocksCore; write: LocksCore } | undefined;

  constructor(
    private readonly cfgFor: (mode: Extract<SharedMode, "read" | "write">) => Config,
    private readonly backendFor: (mode: Extract<SharedMode, "read" | "write">) => LockBackend,
  ) {}

  get(resource: string): ReadWriteLock {
    assertResource(resource);
    if (!this.sides) {
      const scope = new Scope();
      this.sides = {
        read: new LocksCore(this.backendFor("read"), this.cfgFor("read"), scope),
        write: new LocksCore(this.backendFor("write"), this.cfgFor("write"), scope),
      };
    }
    return { resource, read: boundTo(this.sides.read, resource), write: boundTo(this.sides.write, resource) };
  }

  async close(): Promise<void> {
    await Promise.all([this.sides?.read.close(), this.sides?.write.close()]);
  }
}
