import type { Redis } from "ioredis";
import { mastersOf } from "../redis.js";
import { STOCK_PATTERN } from "./keys.js";

/**
 * The highest PostgreSQL token any product's stock has accepted (`pgFence`). The stock lives in Redis and
 * can outlive the lock table: a new database starts its sequence at 1 again, and every postgres-mode write
 * would be refused as stale. The migration raises the sequence to this floor first. On a Cluster every
 * master is scanned, and each key read from the master that holds it.
 */
export async function highestPgFence(redis: Redis): Promise<number> {
  let highest = 0;
  for (const node of mastersOf(redis)) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", STOCK_PATTERN, "COUNT", 500);
      cursor = next;
      const fences = await Promise.all(keys.map((key) => node.hget(key, "pgFence")));
      for (const fence of fences) if (fence !== null) highest = Math.max(highest, Number(fence) || 0);
    } while (cursor !== "0");
  }
  return highest;
}
