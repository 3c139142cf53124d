import { type CommonLocksOptions, type Locks, LockTimeoutError } from "@lockyard/lock";
import type { Contender, ProfileOptions } from "./types.js";

/** The options and their description for one profile, shared by Lockyard on every store. */
export function lockyardOptions(
  { profile, leaseMs = 1_800 }: ProfileOptions,
  factory: string,
  wake: string,
): { opts: CommonLocksOptions; text: string } {
  switch (profile) {
    case "recommended":
      return {
        opts: {},
        text: `${factory} defaults: lease 30 s renewed by the batched watchdog, waitMs 5 s, wake on release${wake} (fallback retry ≤ 500 ms)`,
      };
    case "seed":
      return {
        opts: { waitMs: 5_000, retry: { maxMs: 100 } },
        text: `${factory} with waitMs 5 s, retry.maxMs 100 ms (wake on release${wake} stays on)`,
      };
    case "watchdog":
      return {
        opts: { leaseMs },
        text: `${factory}({ leaseMs: ${leaseMs} }), acquire without leaseMs: the batched watchdog renews every ${Math.round(leaseMs / 3)} ms`,
      };
  }
}

/** A Lockyard `Locks` as a bench contender: a timeout is a null, anything else is an error. */
export function locksContender(locks: Locks, settings: string, closeStore: () => Promise<void>): Contender {
  return {
    settings,
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
      await closeStore();
    },
  };
}
