import { createLocks, LockTimeoutError, type Semaphore } from "@lockyard/lock";
import { connect } from "../../harness/connections.js";
import type { Contender } from "../types.js";
import type { SemaphoreFactory, SemaphoreOptions } from "./types.js";

function optionsFor({ profile, permits, waitMs }: SemaphoreOptions) {
  const call = `locks.semaphore(key, ${permits}).acquire({ waitMs: ${waitMs} })`;
  return profile === "seed"
    ? {
        opts: { retry: { maxMs: 100 } },
        text: `createLocks with retry.maxMs 100 ms (wake on release stays on), ${call}`,
      }
    : {
        opts: {},
        text: `createLocks defaults (lease 30 s renewed by the batched watchdog, wake on release, fallback retry ≤ 500 ms), ${call}`,
      };
}

export const lockyardSemaphore: SemaphoreFactory = {
  id: "lockyard",
  label: "Lockyard semaphore",
  async create(redisUrl, options): Promise<Contender> {
    const redis = await connect(redisUrl, `lib-${this.id}`);
    const { opts, text } = optionsFor(options);
    const locks = createLocks({ redis, ...opts });
    const semaphores = new Map<string, Semaphore>();
    return {
      settings: `@lockyard/lock ${text}; one connection plus its subscriber`,
      async acquire(key) {
        let sem = semaphores.get(key);
        if (!sem) {
          sem = locks.semaphore(key, options.permits);
          semaphores.set(key, sem);
        }
        try {
          const h = await sem.acquire({ waitMs: options.waitMs });
          return { release: async () => void (await h.release()) };
        } catch (err) {
          if (err instanceof LockTimeoutError) return null;
          throw err;
        }
      },
      async close() {
        await locks.close();
        redis.disconnect();
      },
    };
  },
};
