import type { Redis } from "ioredis";

/** Total commands Redis has executed, from INFO commandstats (all clients, all commands). */
export async function totalCommands(redis: Redis): Promise<number> {
  const info = await redis.info("commandstats");
  let total = 0;
  for (const m of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) total += Number(m[1]);
  return total;
}
