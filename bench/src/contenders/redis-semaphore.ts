import { Mutex, TimeoutError } from "redis-semaphore";
import { connect } from "../harness/connections.js";
import type { Contender, ContenderFactory, Held, ProfileOptions } from "./types.js";

type MutexOptions = ConstructorParameters<typeof Mutex>[2];

function optionsFor({ profile, leaseMs = 1_800 }: ProfileOptions): { opts: MutexOptions; text: string } {
  switch (profile) {
    case "recommended":
      return {
        opts: {},
        text: "Mutex defaults: lockTimeout 10 s, refresh every 8 s, poll SET NX every 10 ms, acquireTimeout 10 s",
      };
    case "seed":
      return {
        opts: { retryInterval: 100, acquireTimeout: 5_000 },
        text: "Mutex with retryInterval 100 ms, acquireTimeout 5 s (lockTimeout 10 s default)",
      };
    case "watchdog":
      return {
        opts: { lockTimeout: leaseMs, refreshInterval: Math.round(leaseMs / 3) },
        text: `Mutex lockTimeout ${leaseMs} ms, refreshInterval ${Math.round(leaseMs / 3)} ms (one setInterval per lock)`,
      };
  }
}

export const redisSemaphore: ContenderFactory = {
  id: "redis-semaphore",
  label: "redis-semaphore Mutex",
  async create(redisUrl, options): Promise<Contender> {
    const redis = await connect(redisUrl, `lib-${this.id}`);
    const { opts, text } = optionsFor(options);
    return {
      settings: `redis-semaphore 5.8.0 ${text}; one connection`,
      async acquire(key) {
        const mutex = new Mutex(redis, key, opts);
        try {
          await mutex.acquire();
        } catch (err) {
          if (err instanceof TimeoutError) return null;
          throw err;
        }
        const held: Held = { release: () => mutex.release() };
        return held;
      },
      async close() {
        redis.disconnect();
      },
    };
  },
};
