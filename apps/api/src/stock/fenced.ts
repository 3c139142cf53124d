import { fencedWrite } from "@lockyard/lock";
import type { Redis } from "ioredis";
import { stockKey } from "./keys.js";

export type FencedResult =
  | { ok: true; qty: number }
  | { ok: false; reason: "stale"; fence: number }
  | { ok: false; reason: "insufficient"; qty: number };

/**
 * Where the highest token written is kept. Tokens of different lock stores come from different counters
 * (Redis `fence:{r}`, PostgreSQL's sequence), so each needs its own field: comparing a PostgreSQL token
 * with a Redis one would refuse good writes of whichever counter is behind.
 */
export type FenceField = "fence" | "pgFence";

/**
 * Applies delta only if `token` is not older than the highest token the stock has seen in `field` and the
 * result is not below zero (the library's fencedWrite).
 */
export async function fencedStockWrite(
  redis: Redis,
  productId: string,
  token: number,
  delta: number,
  field: FenceField = "fence",
): Promise<FencedResult> {
  const r = await fencedWrite(redis, stockKey(productId), token, delta, { fence: field });
  if (r.ok) return r;
  return r.reason === "STALE"
    ? { ok: false, reason: "stale", fence: r.fence }
    : { ok: false, reason: "insufficient", qty: r.qty };
}
