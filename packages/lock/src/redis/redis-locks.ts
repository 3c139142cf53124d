import type { Config } from "../config.js";
import type { LockBackend } from "../core/backend.js";
import { LocksCore } from "../core/locks-core.js";
import { InvalidOptionError, LocksClosedError } from "../errors.js";
import type { LockEvent, LockKind } from "../events.js";
import { checkListOptions } from "../options.js";
import { ReadWriteLocks } from "../rwlock/read-write.js";
import { Semaphores } from "../semaphore/semaphore.js";
import type { ListOptions, LockInfo, ReadWriteLock, RedisLocks, Semaphore } from "../types.js";
import type { RedisClient } from "./scripts/index.js";
import { createSharedBackend } from "./shared-backend.js";

/** Where a kind's keys live: `<prefix>semaphore:{name}`, `<prefix>rw:{name}` (resource.ts). */
export const SEMAPHORE_PREFIX = "semaphore:";
export const READ_WRITE_PREFIX = "rw:";

/** The Redis Locks: the mutex core, plus semaphores and read-write locks on cores of their own. */
export class RedisLocksCore extends LocksCore implements RedisLocks {
  private readonly semaphores: Semaphores;
  private readonly readWrites: ReadWriteLocks;

  constructor(
    backend: LockBackend,
    cfg: Config,
    redis: RedisClient,
    /** The replica-ack wrapper (or none) the mutex got, for the other kinds too. */
    wrap: (b: LockBackend) => LockBackend,
  ) {
    super(backend, cfg);
    // Each kind's events carry its name, so one onEvent can tell a semaphore's "acquired" from a mutex's.
    const kind = (suffix: string, k: LockKind): Config => {
      const emit = cfg.emit;
      return {
        ...cfg,
        prefix: `${cfg.prefix}${suffix}`,
        emit: emit && ((e: LockEvent) => emit({ ...e, kind: k })),
      };
    };
    const semCfg = kind(SEMAPHORE_PREFIX, "semaphore");
    const rwCfg = (mode: "read" | "write") => kind(READ_WRITE_PREFIX, mode);
    const writerMarkMs = cfg.queueLeaseMs;
    this.semaphores = new Semaphores(semCfg, (permitsOf) =>
      wrap(
        createSharedBackend(redis, {
          prefix: semCfg.prefix,
          mode: "permit",
          permitsOf,
          writerMarkMs,
          queueLeaseMs: cfg.queueLeaseMs,
        }),
      ),
    );
    this.readWrites = new ReadWriteLocks(rwCfg, (mode) =>
      wrap(
        createSharedBackend(redis, {
          prefix: rwCfg(mode).prefix,
          mode,
          writerMarkMs,
          queueLeaseMs: cfg.queueLeaseMs,
        }),
      ),
    );
  }

  semaphore(resource: string, permits: number): Semaphore {
    if (this.closed) throw new LocksClosedError();
    return this.semaphores.get(resource, permits);
  }

  readWrite(resource: string): ReadWriteLock {
    if (this.closed) throw new LocksClosedError();
    return this.readWrites.get(resource);
  }

  override async list(opts?: ListOptions): Promise<LockInfo[]> {
    if (this.closed) throw new LocksClosedError();
    checkListOptions(opts);
    const kind = opts?.kind ?? "mutex";
    if (kind === "semaphore") return this.semaphores.list(opts!);
    if (kind === "read-write") return this.readWrites.list(opts!);
    if (kind !== "mutex") throw new InvalidOptionError("kind", kind, '"mutex", "semaphore" or "read-write"');
    return super.list(opts);
  }

  override async close(): Promise<void> {
    await Promise.all([super.close(), this.semaphores.close(), this.readWrites.close()]);
  }
}
