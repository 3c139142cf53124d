/**
 * redlockRelease: `release` (release.ts) on one node of a Redlock quorum, except for the message: it carries
 * the owner, so a waiter subscribed on N nodes can tell one release (published by each node) from the next.
 * Independent nodes are never a Cluster, so it always uses PUBLISH. Everything else (not-owner, decrement
 * that never shortens the TTL, delete, publish only when `~waiters` is marked) is release's;
 * test/redis/redlock-scripts.test.ts runs both on the same inputs.
 * KEYS[1] lock hash, KEYS[2] channel
 * ARGV[1] owner, ARGV[2] leaseMs
 * Returns {0, 0} not-owner, {1, left} decremented, {2, 0} released.
 * Sent with callScript (redlock/send.ts), not defineCommand, to know whether a call ever left the process.
 */
export const redlockRelease = {
  name: "lockyardRedlockRelease",
  numberOfKeys: 2,
  lua: `
local function release_naming_owner(k, ch, o, lease)
  if redis.call('hexists', k, o) == 0 then return 0, 0 end
  local left = redis.call('hincrby', k, o, -1)
  if left > 0 then
    if redis.call('pttl', k) < tonumber(lease) then redis.call('pexpire', k, lease) end
    return 1, left
  end
  local waiting = redis.call('hexists', k, '~waiters')
  redis.call('del', k)
  if waiting == 1 then redis.call('publish', ch, o) end
  return 2, 0
end
return {release_naming_owner(KEYS[1], KEYS[2], ARGV[1], ARGV[2])}
`,
} as const;
