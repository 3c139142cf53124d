import type { Redis } from "ioredis";
import { stockKey } from "./keys.js";

// TEMPORARY until @lockyard/lock exports fencedWrite: same contract as DESIGN §3.
// KEYS[1] stock hash; ARGV token, delta. Returns {1, qtyAfter} or {0, fence} when the token is stale.
const lua = `
local fence = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
local token = tonumber(ARGV[1])
if token < fence then return {0, fence} end
redis.call('HSET', KEYS[1], 'fence', token)
return {1, redis.call('HINCRBY', KEYS[1], 'qty', tonumber(ARGV[2]))}
`;

type WithFenced = Redis & {
  lockyardFencedWrite(key: string, token: number, delta: number): Promise<[number, number]>;
};

export type FencedResult = { ok: true; qty: number } | { ok: false; stale: true };

/** Applies delta only if `token` is not older than the highest token already written. */
export async function fencedStockWrite(
  redis: Redis,
  productId: string,
  token: number,
  delta: number,
): Promise<FencedResult> {
  const r = redis as WithFenced;
  if (typeof r.lockyardFencedWrite !== "function") {
    redis.defineCommand("lockyardFencedWrite", { numberOfKeys: 1, lua });
  }
  const [ok, value] = await r.lockyardFencedWrite(stockKey(productId), token, delta);
  return ok === 1 ? { ok: true, qty: Number(value) } : { ok: false, stale: true };
}
