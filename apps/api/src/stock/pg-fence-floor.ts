import type { Redis } from "ioredis";
import { stockKey } from "./keys.js";

/**
 * The highest PostgreSQL token any product's stock has accepted (`pgFence`). The stock lives in Redis and
 * can outlive the lock table: a new database starts its sequence at 1 again, and every postgres-mode write
 * would be refused as stale. The migration raises the sequence to this floor first.
 */
export async function highestPgFence(redis: Redis): Promise<number> {
  let highest = 0;
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", stockKey("*"), "COUNT", 500);
    cursor = next;
    const fences = await Promise.all(keys.map((key) => redis.hget(key, "pgFence")));
    for (const fence of fences) if (fence !== null) highest = Math.max(highest, Number(fence) || 0);
  } while (cursor !== "0");
  return highest;
}
