import { INTEGER_FIELD_LUA } from "./integer-field.js";

/**
 * fencedWrite: the guarded write of a fenced resource (the stock demo's deduction), on any hash.
 * KEYS[1] the guarded hash; ARGV[1] fencing token, ARGV[2] integer delta, ARGV[3] value field (e.g. `qty`),
 * ARGV[4] fence field (e.g. `fence`)
 * Returns {0, fence} STALE when the token is below the stored fence (nothing written);
 * {-1, value} INSUFFICIENT when the delta would take the value below zero (nothing written: the seed's
 * `UPDATE … WHERE quantity > 0`, the last line of defence whatever the interleaving);
 * else stores fence = max(fence, token), applies the delta and returns {1, value}.
 * Errors (nothing written) when the value or fence field holds anything but an integer of at most 2^53 - 1.
 */
export const fencedWrite = {
  name: "lockyardFencedWrite",
  numberOfKeys: 1,
  lua: `
${INTEGER_FIELD_LUA}
local token = tonumber(ARGV[1])
local fence, bad = integerField(KEYS[1], ARGV[4])
if not fence then return bad end
if token < fence then return {0, fence} end
local value
value, bad = integerField(KEYS[1], ARGV[3])
if not value then return bad end
local delta = tonumber(ARGV[2])
if delta < 0 and value + delta < 0 then return {-1, value} end
if token > fence then redis.call('hset', KEYS[1], ARGV[4], string.format('%d', token)) end
return {1, redis.call('hincrby', KEYS[1], ARGV[3], delta)}
`,
} as const;
