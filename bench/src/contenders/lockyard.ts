import { createLocks } from "@lockyard/lock";
import { connect } from "../harness/connections.js";
import { locksContender, lockyardOptions } from "./lockyard-common.js";
import type { Contender, ContenderFactory } from "./types.js";

export const lockyard: ContenderFactory = {
  id: "lockyard",
  label: "Lockyard",
  async create(redisUrl, options): Promise<Contender> {
    const redis = await connect(redisUrl, `lib-${this.id}`);
    const { opts, text } = lockyardOptions(options, "createLocks", "");
    const locks = createLocks({ redis, ...opts });
    return locksContender(locks, `@lockyard/lock ${text}; one connection plus its subscriber`, async () => {
      redis.disconnect();
    });
  },
};
