import type { Redis } from "ioredis";
import { stockKey } from "./keys.js";

// KEYS[1] stock hash; ARGV[1] quantity.
// Returns {1, qtyAfter} when decremented, {0, qty} when there was not enough.
const lua = `
local qty = tonumber(redis.call('HGET', KEYS[1], 'qty') or '0')
local n = tonumber(ARGV[1])
if qty < n then return {0, qty} end
return {1, redis.call('HINCRBY', KEYS[1], 'qty', -n)}
`;

type WithDecrement = Redis & {
  lockyardStockDecrement(key: string, quantity: number): Promise<[number, number]>;
};

/** One atomic decrement-if-enough: the `atomic` mode, which needs no lock at all. */
export async function atomicDecrement(
  redis: Redis,
  productId: string,
  quantity: number,
): Promise<{ ok: boolean; qty: number }> {
  const r = redis as WithDecrement;
  if (typeof r.lockyardStockDecrement !== "function") {
    redis.defineCommand("lockyardStockDecrement", { numberOfKeys: 1, lua });
  }
  const [ok, qty] = await r.lockyardStockDecrement(stockKey(productId), quantity);
  return { ok: ok === 1, qty: Number(qty) };
}
