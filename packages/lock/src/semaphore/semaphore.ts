import type { Config } from "../config.js";
import type { LockBackend } from "../core/backend.js";
import { boundTo } from "../core/bound.js";
import { LocksCore } from "../core/locks-core.js";
import { InvalidOptionError } from "../errors.js";
import { assertResource, lockKey } from "../resource.js";
import type { ListOptions, LockInfo, Semaphore } from "../types.js";

/** Most permits a semaphore may have: every attempt reads all holders (shared-body.ts `holders`). */
export const MAX_PERMITS = 10_000;

/**
 * The semaphores of one Locks: one core (watchdog, waiters, lost signal) over the shared-lock store in
 * permit mode, created on first use. The permit count travels with each attempt, keyed by lock key.
 */
export class Semaphores {
  private core: LocksCore | undefined;
  private readonly permits = new Map<string, number>();

  constructor(
    private readonly cfg: Config,
    private readonly backendFor: (permitsOf: (key: string) => number) => LockBackend,
  ) {}

  get(resource: string, permits: number): Semaphore {
    assertResource(resource);
    if (
      typeof permits !== "number" ||
      !Number.isSafeInteger(permits) ||
      permits < 1 ||
      permits > MAX_PERMITS
    ) {
      throw new InvalidOptionError("permits", permits, `an integer in [1, ${MAX_PERMITS}]`);
    }
    const n = permits;
    const core = this.made();
    // The latest count given for a name is what this process's attempts send.
    this.permits.set(lockKey(this.cfg.prefix, resource), n);
    return { ...boundTo(core, resource), permits: n };
  }

  /** Every semaphore in Redis, not only this process's: list({ kind: "semaphore" }). */
  list(opts: ListOptions): Promise<LockInfo[]> {
    return this.made().list({ ...opts, kind: "mutex" });
  }

  private made(): LocksCore {
    this.core ??= new LocksCore(
      this.backendFor((key) => this.permits.get(key) ?? 1),
      this.cfg,
    );
    return this.core;
  }

  async close(): Promise<void> {
    await this.core?.close();
  }
}
