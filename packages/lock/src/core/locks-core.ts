import { acquireLoop, type Lease, type LoopHost, type Waited } from "./acquire-loop.js";
import type { AcquireReply, LockBackend, ReadsFn } from "../backend.js";
import type { Config } from "../config.js";
import { InvalidOptionError, LockLostError, LocksClosedError } from "../errors.js";
import { Handle, type HandleHost } from "./handle.js";
import { LateReleases } from "./late-release.js";
import { checkMs, checkOwner, checkSignal } from "../options.js";
import { newOwnerId } from "../owner.js";
import { assertResource, lockKey } from "../resource.js";
import { Scope } from "./scope.js";
import { Subscriptions } from "./subscriptions.js";
import type { AcquireOptions, ListOptions, LockHandle, LockInfo, Locks } from "../types.js";
import { Gate } from "./waiters.js";
import { Scheduler } from "./watchdog.js";

/** The Locks implementation over any backend: handles, watchdog, waiter FIFO, scope and lost-lock logic. */
export class LocksCore implements Locks, HandleHost, LoopHost {
  closed = false;
  readonly emit: Config["emit"];
  readonly gates = new Map<string, number | Gate>();
  private readonly scheduler: Scheduler;
  private readonly late: LateReleases;
  private readonly scope = new Scope();
  private readonly subs: Subscriptions;

  constructor(
    readonly backend: LockBackend,
    readonly cfg: Config,
  ) {
    this.emit = cfg.emit;
    this.scheduler = new Scheduler(backend);
    this.late = new LateReleases(backend);
    this.subs = new Subscriptions(backend, (resource) => {
      const g = this.gates.get(resource);
      if (g instanceof Gate) g.onRelease();
    });
  }

  async acquire(resource: string, opts?: AcquireOptions): Promise<LockHandle> {
    return (await this.take(resource, opts, false))!;
  }

  async tryAcquire(resource: string, opts?: Omit<AcquireOptions, "waitMs">): Promise<LockHandle | null> {
    return this.take(resource, opts, true);
  }

  async withLock<T>(
    resource: string,
    fn: (lock: LockHandle) => Promise<T> | T,
    opts?: AcquireOptions,
  ): Promise<T> {
    if (typeof fn !== "function") throw new InvalidOptionError("fn", fn, "a function");
    const h = (await this.take(resource, opts, false))!;
    let value: T | undefined;
    let failed = false;
    let error: unknown;
    try {
      value = await this.scope.run(resource, h.owner, () => fn(h));
    } catch (e) {
      failed = true;
      error = e;
    }
    // The timer may not have fired yet: a passed deadline is a loss all the same.
    if (h.state === 0 && performance.now() >= h.deadline) h.lose(h.watchdog ? "deadline" : "expired");
    let releaseError: unknown;
    let releaseFailed = false;
    if (!h.released && !this.closed) {
      try {
        await h.release();
      } catch (e) {
        releaseFailed = true;
        releaseError = e;
      }
    }
    const lost = h.lostError;
    if (lost) {
      if (!failed || error === lost) throw lost;
      throw new LockLostError(lost.resource, lost.owner, lost.reason, { cause: error });
    }
    if (failed) throw error;
    if (releaseFailed) throw releaseError;
    return value as T;
  }

  async list(opts?: ListOptions): Promise<LockInfo[]> {
    this.open();
    const match = opts?.match ?? "*";
    if (typeof match !== "string" || !/^[A-Za-z0-9:_.*?-]{1,200}$/.test(match)) {
      throw new InvalidOptionError("match", match, "1-200 characters of [A-Za-z0-9:_.-] and the globs * ?");
    }
    const count = checkMs("count", opts?.count ?? 100, 1);
    const limit = checkMs("limit", opts?.limit ?? 10_000, 1);
    const raw = await this.backend.list(match, count, limit);
    return raw.map((info) => {
      const leaseMs = info.owners[0] && this.scheduler.leaseOf(info.key, info.owners[0].owner);
      return leaseMs === undefined ? info : { ...info, leaseMs };
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.scheduler.stop();
    this.late.stop();
    for (const g of this.gates.values()) if (g instanceof Gate) g.wakeAll();
    await this.subs.close();
    await this.backend.close();
  }

  // ---- internals shared with the handle and the acquire loop ----

  unwatch(h: Handle): void {
    this.scheduler.remove(h);
  }

  releaseFailed(h: Handle, err: unknown): void {
    // Only a full release (count 1) is retried: a call that ran but lost its reply would, retried, decrement
    // a re-entered lock a second time and free it under its outer holder. For count 1 a second run of the
    // owner-checked script answers not-owner.
    if (this.closed || h.count !== 1 || performance.now() >= h.deadline) return;
    if (this.backend.noReply?.(err)) this.late.add(h);
  }

  subscribe(g: Gate, resource: string): void {
    if (g.sub !== 0) return;
    g.sub = 1;
    void this.subs.add(resource).then(() => {
      g.sub = 2;
      if (this.gates.get(resource) !== g) this.subs.remove(resource);
      else g.wakeHead(true);
    });
  }

  dropIfIdle(g: Gate, resource: string): void {
    if (!g.idle || this.gates.get(resource) !== g) return;
    this.gates.delete(resource);
    if (g.sub === 2) this.subs.remove(resource);
  }

  acquired(resource: string, key: string, owner: string, r: AcquireReply, lease: Lease, w: Waited): Handle {
    const h = new Handle(
      this,
      resource,
      key,
      owner,
      r[2] ?? null,
      r[1],
      lease.leaseMs,
      lease.watchdog,
      w.sentAt,
    );
    if (r[3]) h.reads = r[3];
    this.scheduler.add(h);
    this.emit?.({
      type: "acquired",
      resource,
      owner,
      token: h.token,
      count: h.count,
      waitedMs: performance.now() - w.start,
      attempts: w.attempts,
    });
    return h;
  }

  private open(): void {
    if (this.closed) throw new LocksClosedError();
  }

  private take(resource: string, opts: AcquireOptions | undefined, tryOnce: boolean): Promise<Handle | null> {
    this.open();
    assertResource(resource);
    let leaseMs = this.cfg.leaseMs;
    let watchdog = true;
    let waitMs = this.cfg.waitMs;
    let owner: string | undefined;
    let signal: AbortSignal | undefined;
    let reads: ReadsFn | undefined;
    if (opts !== undefined) {
      if (typeof opts !== "object" || opts === null)
        throw new InvalidOptionError("options", opts, "an object");
      if (opts.leaseMs !== undefined) {
        leaseMs = checkMs("leaseMs", opts.leaseMs, 1);
        watchdog = false;
      }
      if (opts.waitMs !== undefined) waitMs = checkMs("waitMs", opts.waitMs, 0);
      if (opts.owner !== undefined) owner = checkOwner(opts.owner);
      signal = checkSignal(opts.signal);
      if (opts.reads !== undefined) {
        if (typeof opts.reads !== "function") throw new InvalidOptionError("reads", opts.reads, "a function");
        if (!this.backend.canRead)
          throw new InvalidOptionError("reads", "set", "unset: this store cannot send reads");
        reads = opts.reads;
      }
      signal?.throwIfAborted();
    }
    owner ??= this.scope.ownerOf(resource);
    const bypass = owner !== undefined;
    return acquireLoop(
      this,
      {
        resource,
        key: lockKey(this.cfg.prefix, resource),
        owner: owner ?? newOwnerId(this.cfg.instanceId),
        leaseMs,
        watchdog,
        waitMs: tryOnce ? 0 : waitMs,
        signal,
        reads,
        bypass,
      },
      !tryOnce,
    );
  }
}
