import { connect } from "../harness/connections.js";
import { createSeedLocks, SEED_DEFAULTS } from "./seed/seed-lock.js";
import type { Contender, ContenderFactory } from "./types.js";

export const seedDesign: ContenderFactory = {
  id: "seed",
  label: "seed design (100 ms poll)",
  async create(redisUrl, { profile, leaseMs = 1_800 }): Promise<Contender> {
    const redis = await connect(redisUrl, `lib-${this.id}`);
    // The seed has one set of settings, so "recommended" and "seed" are the same thing here.
    const opts =
      profile === "watchdog"
        ? { ...SEED_DEFAULTS, leaseMs, renewEveryMs: Math.round(leaseMs / 3) }
        : SEED_DEFAULTS;
    const locks = createSeedLocks(redis, opts);
    return {
      settings: `hash lock + Lua (EVALSHA), lease ${opts.leaseMs} ms renewed every ${opts.renewEveryMs} ms by one timer per lock, poll every ${opts.retryMs} ms, wait ${opts.waitMs} ms`,
      async acquire(key) {
        const h = await locks.acquire(key);
        return h && { release: async () => void (await h.release()) };
      },
      async close() {
        redis.disconnect();
      },
    };
  },
};
