/**
 * fencedWrite: the stock demo's guarded write.
 * KEYS[1] stock hash (`qty`, `fence`); ARGV[1] fencing token, ARGV[2] integer delta for `qty`
 * Returns {0, fence} STALE when the token is below the stored fence (nothing written);
 * else stores fence = max(fence, token), applies the delta and returns {1, qty}.
 */
export const fencedWrite = {
  name: "lockyardFencedWrite",
  numberOfKeys: 1,
  lua: `
local token = tonumber(ARGV[1])
local fence = tonumber(redis.call('hget', KEYS[1], 'fence') or '0')
if token < fence then return {0, fence} end
redis.call('hset', KEYS[1], 'fence', ARGV[1])
return {1, redis.call('hincrby', KEYS[1], 'qty', ARGV[2])}
`,
} as const;
