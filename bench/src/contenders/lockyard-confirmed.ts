import { createLocks } from "@lockyard/lock";
import { connect } from "../harness/connections.js";
import { locksContender, lockyardOptions } from "./lockyard-common.js";
import type { Contender, ContenderFactory } from "./types.js";

/**
 * Lockyard with both handoff shortcuts off: a local waiter starts once Redis has answered the release that granted
 * it (`localHandoff: "confirmed"`), and a waiter handed the lock by another process adopts it with an attempt
 * (`handoffAdoption: "attempt"`). What each of them saves is one round trip, so it shows over a network (j).
 */
export const lockyardConfirmed: ContenderFactory = {
  id: "lockyard-confirmed",
  label: "Lockyard, handoffs confirmed",
  async create(redisUrl, options): Promise<Contender> {
    const redis = await connect(redisUrl, `lib-${this.id}`);
    const { opts, text } = lockyardOptions(options, "createLocks", "");
    const locks = createLocks({ redis, ...opts, localHandoff: "confirmed", handoffAdoption: "attempt" });
    return locksContender(
      locks,
      `@lockyard/lock ${text}, localHandoff "confirmed", handoffAdoption "attempt"; one connection plus its subscriber`,
      async () => {
        redis.disconnect();
      },
    );
  },
};
