import { Semaphore, TimeoutError } from "redis-semaphore";
import { connect } from "../../harness/connections.js";
import type { Contender, Held } from "../types.js";
import type { SemaphoreFactory, SemaphoreOptions } from "./types.js";

type Options = NonNullable<ConstructorParameters<typeof Semaphore>[3]>;

function optionsFor({ profile, permits, waitMs }: SemaphoreOptions): { opts: Options; text: string } {
  const call = `new Semaphore(redis, key, ${permits}, opts).acquire()`;
  return profile === "seed"
    ? {
        opts: { retryInterval: 100, acquireTimeout: waitMs },
        text: `${call} with retryInterval 100 ms, acquireTimeout ${waitMs} ms (lockTimeout 10 s default)`,
      }
    : {
        opts: { acquireTimeout: waitMs },
        text: `${call} with defaults (lockTimeout 10 s, refresh every 8 s, poll every 10 ms) but acquireTimeout ${waitMs} ms`,
      };
}

export const redisSemaphoreSemaphore: SemaphoreFactory = {
  id: "redis-semaphore",
  label: "redis-semaphore Semaphore",
  async create(redisUrl, options): Promise<Contender> {
    const redis = await connect(redisUrl, `lib-${this.id}`);
    const { opts, text } = optionsFor(options);
    return {
      settings: `redis-semaphore 5.8.0 ${text}; one connection`,
      async acquire(key) {
        const semaphore = new Semaphore(redis, key, options.permits, opts);
        try {
          await semaphore.acquire();
        } catch (err) {
          if (err instanceof TimeoutError) return null;
          throw err;
        }
        const held: Held = { release: () => semaphore.release() };
        return held;
      },
      async close() {
        redis.disconnect();
      },
    };
  },
};
