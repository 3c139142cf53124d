import type { Redis } from "ioredis";
import { defineScripts } from "../lib/scripts.js";
import { stockKey } from "./keys.js";

// KEYS[1] stock hash; ARGV[1] quantity.
// Returns {1, qtyAfter} when decremented, {0, qty} when there was not enough.
const decrementLua = `
local qty = tonumber(redis.call('HGET', KEYS[1], 'qty') or '0')
local n = tonumber(ARGV[1])
if qty < n then return {0, qty} end
return {1, redis.call('HINCRBY', KEYS[1], 'qty', -n)}
`;

const scripts = defineScripts<{
  lockyardStockDecrement(key: string, quantity: number): Promise<[number, number]>;
}>({ name: "lockyardStockDecrement", numberOfKeys: 1, lua: decrementLua });

/** One atomic decrement-if-enough: the `atomic` mode, which needs no lock at all. */
export async function atomicDecrement(
  redis: Redis,
  productId: string,
  quantity: number,
): Promise<{ ok: boolean; qty: number }> {
  const [ok, qty] = await scripts(redis).lockyardStockDecrement(stockKey(productId), quantity);
  return { ok: ok === 1, qty: Number(qty) };
}
