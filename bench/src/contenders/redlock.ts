import Redlock, { ExecutionError } from "redlock";
import { connect } from "../harness/connections.js";
import type { Contender, ContenderFactory, Held, ProfileOptions } from "./types.js";

const DEFAULT_LEASE_MS = 30_000;

function settingsFor({ profile, leaseMs = 1_800 }: ProfileOptions) {
  switch (profile) {
    case "recommended":
      return {
        settings: {},
        text: "defaults: retryCount 10, retryDelay 200 ms ± 100 ms jitter (≈2 s wait), driftFactor 0.01; acquire(key, 30 s) + release(), no auto-extension",
      };
    case "seed":
      return {
        settings: { retryDelay: 100, retryCount: 50 },
        text: "retryDelay 100 ms (default ± 100 ms jitter), retryCount 50 (≈5 s wait); acquire(key, 30 s) + release()",
      };
    case "watchdog":
      return {
        settings: { automaticExtensionThreshold: Math.round((leaseMs * 2) / 3) },
        text: `using(key, ${leaseMs} ms) with automaticExtensionThreshold ${Math.round((leaseMs * 2) / 3)} ms (extends every ≈lease/3, one setTimeout per lock)`,
      };
  }
}

export const redlock: ContenderFactory = {
  id: "redlock",
  label: "node-redlock 5β",
  async create(redisUrl, options): Promise<Contender> {
    const redis = await connect(redisUrl, `lib-${this.id}`);
    const { settings, text } = settingsFor(options);
    const rl = new Redlock([redis], settings);
    const timedOut = (err: unknown) => err instanceof ExecutionError;

    const acquirePlain = async (key: string): Promise<Held | null> => {
      try {
        const lock = await rl.acquire([key], DEFAULT_LEASE_MS);
        return {
          async release() {
            await lock.release();
          },
        };
      } catch (err) {
        if (timedOut(err)) return null;
        throw err;
      }
    };

    // `using` is redlock's only auto-extending form: the lock lives as long as the routine, so the routine
    // hands back a Held and waits for its release.
    const acquireUsing = (key: string, leaseMs: number): Promise<Held | null> =>
      new Promise((resolve, reject) => {
        let letGo!: () => void;
        const released = new Promise<void>((r) => {
          letGo = r;
        });
        const done = rl.using([key], leaseMs, settings, async () => {
          resolve({
            async release() {
              letGo();
              await done;
            },
          });
          await released;
        });
        done.catch((err: unknown) => (timedOut(err) ? resolve(null) : reject(err)));
      });

    return {
      settings: `redlock 5.0.0-beta.2 with one client, ${text}`,
      acquire: (key) =>
        options.profile === "watchdog" ? acquireUsing(key, options.leaseMs ?? 1_800) : acquirePlain(key),
      async close() {
        redis.disconnect();
      },
    };
  },
};
