import type { Config } from "../config.js";
import type { LockBackend } from "../core/backend.js";
import { boundTo } from "../core/bound.js";
import { LocksCore } from "../core/locks-core.js";
import { Scope } from "../core/scope.js";
import type { SharedMode } from "../redis/scripts/index.js";
import { assertResource } from "../resource.js";
import type { ListOptions, LockInfo, ReadWriteLock } from "../types.js";

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
    const { read, write } = this.made();
    return { resource, read: boundTo(read, resource), write: boundTo(write, resource) };
  }

  /** Every read-write lock in Redis: list({ kind: "read-write" }). Both sides share the keys; either lists them. */
  async list(opts: ListOptions): Promise<LockInfo[]> {
    const { read, write } = this.made();
    const infos = await read.list({ ...opts, kind: "mutex" });
    return infos.map((info) => {
      const first = info.owners[0];
      const leaseMs = info.leaseMs ?? (first && write.leaseOf(info.key, first.owner));
      return leaseMs === undefined ? info : { ...info, leaseMs };
    });
  }

  private made(): { read: LocksCore; write: LocksCore } {
    if (!this.sides) {
      const scope = new Scope();
      this.sides = {
        read: new LocksCore(this.backendFor("read"), this.cfgFor("read"), scope),
        write: new LocksCore(this.backendFor("write"), this.cfgFor("write"), scope),
      };
    }
    return this.sides;
  }

  async close(): Promise<void> {
    await Promise.all([this.sides?.read.close(), this.sides?.write.close()]);
  }
}
