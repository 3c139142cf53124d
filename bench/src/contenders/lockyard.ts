import { type CommonLocksOptions, createLocks, LockTimeoutError } from "@lockyard/lock";
import { connect } from "../harness/connections.js";
import type { Contender, ContenderFactory, ProfileOptions } from "./types.js";

function optionsFor({ profile, leaseMs = 1_800 }: ProfileOptions): {
  opts: CommonLocksOptions;
  text: string;
} {
  switch (profile) {
    case "recommended":
      return {
        opts: {},
        text: "createLocks defaults: lease 30 s renewed by the batched watchdog, waitMs 5 s, wake on release (fallback retry ≤ 500 ms)",
      };
    case "seed":
      return {
        opts: { waitMs: 5_000, retry: { maxMs: 100 } },
        text: "createLocks with waitMs 5 s, retry.maxMs 100 ms (wake on release stays on)",
      };
    case "watchdog":
      return {
        opts: { leaseMs },
        text: `createLocks({ leaseMs: ${leaseMs} }), acquire without leaseMs: the batched watchdog renews every ${Math.round(leaseMs / 3)} ms`,
      };
  }
}

export const lockyard: ContenderFactory = {
  id: "lockyard",
  label: "Lockyard",
  async create(redisUrl, options): Promise<Contender> {
    const redis = await connect(redisUrl, `lib-${this.id}`);
    const { opts, text } = optionsFor(options);
    const locks = createLocks({ redis, ...opts });
    return {
      settings: `@lockyard/lock ${text}; one connection plus its subscriber`,
      async acquire(key) {
        try {
          const h = await locks.acquire(key);
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
