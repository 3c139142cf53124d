/**
 * release
 * KEYS[1] lock hash; KEYS[2] channel `lock-released:{r}` (same hash tag, so same slot)
 * ARGV[1] owner, ARGV[2] leaseMs, ARGV[3] "1" to use SPUBLISH (Cluster) instead of PUBLISH
 * Returns {0, 0} not-owner (nothing deleted); {1, left} decremented (TTL raised to leaseMs, never lowered);
 * {2, 0} released: the key is deleted, and the channel is published to only if a waiter marked `~waiters`.
 */
export const release = {
  name: "lockyardRelease",
  numberOfKeys: 2,
  lua: `
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return {0, 0} end
local left = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if left > 0 then
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then redis.call('pexpire', KEYS[1], ARGV[2]) end
  return {1, left}
end
local waiting = redis.call('hexists', KEYS[1], '~waiters')
redis.call('del', KEYS[1])
if waiting == 1 then
  if ARGV[3] == '1' then redis.call('spublish', KEYS[2], '1') else redis.call('publish', KEYS[2], '1') end
end
return {2, 0}
`,
} as const;
