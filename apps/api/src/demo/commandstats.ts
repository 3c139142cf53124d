import type { Redis } from "ioredis";

/**
 * The commands a deduct sends to the main Redis: lock scripts (acquire, release, fenced write, atomic
 * decrement, the barrier's read), stock reads and writes, and the known-product check. Observers use others
 * (the live view's SCAN/HGETALL/PTTL, run logs' RPUSH/LRANGE, the barrier's HMGET poll), so counting only
 * these gives what the run's requests cost, not what its watchers cost. Redlock and PostgreSQL modes take
 * their locks elsewhere: their figure is the stock commands alone.
 */
const DEDUCT_COMMANDS: ReadonlySet<string> = new Set([
  "evalsha",
  "eval",
  "evalsha_ro",
  "eval_ro",
  "fcall",
  "hget",
  "hincrby",
  "hset",
  "exists",
]);

/** Commands Redis has executed that a deduct may send, from INFO commandstats (all clients). */
export async function deductCommands(redis: Redis): Promise<number> {
  const info = await redis.info("commandstats");
  let total = 0;
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (DEDUCT_COMMANDS.has(m[1]!.toLowerCase())) total += Number(m[2]);
  }
  return total;
}
