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

// KEYS[1] stock hash; ARGV[1] token, ARGV[2] delta for `qty`, ARGV[3] the fence field.
// The library's fencedWrite with the field as an argument and the floor of DESIGN §3: {0, fence} STALE,
// {2, qty} INSUFFICIENT (the result would be below zero; nothing written), else {1, qtyAfter}.
const lua = `
local token = tonumber(ARGV[1])
local fence = tonumber(redis.call('HGET', KEYS[1], ARGV[3]) or '0')
if token < fence then return {0, fence} end
local qty = tonumber(redis.call('HGET', KEYS[1], 'qty') or '0')
if qty + tonumber(ARGV[2]) < 0 then return {2, qty} end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[1])
return {1, redis.call('HINCRBY', KEYS[1], 'qty', ARGV[2])}
`;

type WithFencedField = Redis & {
  lockyardFencedFieldWrite(
    key: string,
    token: number,
    delta: number,
    field: string,
  ): Promise<[number, number]>;
};

/** Applies delta only if `token` is not older than the highest token already written (DESIGN §3). */
export async function fencedStockWrite(
  redis: Redis,
  productId: string,
  token: number,
  delta: number,
  field: FenceField = "fence",
): Promise<FencedResult> {
  if (field === "fence") {
    const r = await fencedWrite(redis, stockKey(productId), token, delta);
    if (r.ok) return r;
    const refused = r as { reason: string; fence?: number; qty?: number };
    return refused.reason === "STALE"
      ? { ok: false, reason: "stale", fence: refused.fence ?? 0 }
      : { ok: false, reason: "insufficient", qty: refused.qty ?? 0 };
  }
  const r = redis as WithFencedField;
  if (typeof r.lockyardFencedFieldWrite !== "function") {
    redis.defineCommand("lockyardFencedFieldWrite", { numberOfKeys: 1, lua });
  }
  const [ok, value] = await r.lockyardFencedFieldWrite(stockKey(productId), token, delta, field);
  if (ok === 1) return { ok: true, qty: Number(value) };
  return ok === 2
    ? { ok: false, reason: "insufficient", qty: Number(value) }
    : { ok: false, reason: "stale", fence: Number(value) };
}
