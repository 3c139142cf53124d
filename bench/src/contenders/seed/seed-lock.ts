import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import { LOCK, RENEW, UNLOCK } from "./scripts.js";

export interface SeedOptions {
  leaseMs: number;
  renewEveryMs: number;
  waitMs: number;
  retryMs: number;
}

/** The seed's defaults (appsettings.json): lease 30 s, renew every 10 s, wait 5 s, retry every 100 ms. */
export const SEED_DEFAULTS: SeedOptions = {
  leaseMs: 30_000,
  renewEveryMs: 10_000,
  waitMs: 5_000,
  retryMs: 100,
};

type SeedRedis = Redis & {
  seedLock(key: string, owner: string, leaseMs: number): Promise<number>;
  seedUnlock(key: string, owner: string, leaseMs: number): Promise<number>;
  seedRenew(key: string, owner: string, leaseMs: number): Promise<number>;
};

export interface SeedHandle {
  release(): Promise<boolean>;
}

/**
 * A faithful small copy of the seed's design: a hash lock (field = owner, value = re-entry count) taken by
 * polling its Lua script every `retryMs` until `waitMs` has passed, and one renewal loop per held lock.
 */
export function createSeedLocks(redis: Redis, opts: SeedOptions) {
  redis.defineCommand("seedLock", { numberOfKeys: 1, lua: LOCK });
  redis.defineCommand("seedUnlock", { numberOfKeys: 1, lua: UNLOCK });
  redis.defineCommand("seedRenew", { numberOfKeys: 1, lua: RENEW });
  const r = redis as SeedRedis;
  const machine = hostname();

  async function acquire(resource: string): Promise<SeedHandle | null> {
    const key = `lock:${resource}`;
    const owner = `${machine}:${randomUUID().replaceAll("-", "")}`;
    const deadline = performance.now() + opts.waitMs;
    for (;;) {
      if ((await r.seedLock(key, owner, opts.leaseMs)) === 1) return handle(key, owner);
      if (performance.now() > deadline) return null;
      await sleep(opts.retryMs);
    }
  }

  function handle(key: string, owner: string): SeedHandle {
    // Like the seed's PeriodicTimer loop: one timer per held lock, stopped when a renewal answers 0.
    const timer = setInterval(async () => {
      if ((await r.seedRenew(key, owner, opts.leaseMs).catch(() => 0)) === 0) clearInterval(timer);
    }, opts.renewEveryMs);
    timer.unref();
    let released = false;
    return {
      async release() {
        if (released) return true;
        released = true;
        clearInterval(timer);
        return (await r.seedUnlock(key, owner, opts.leaseMs)) > 0;
      },
    };
  }

  return { acquire };
}
