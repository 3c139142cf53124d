/**
 * release: one Lua body, used by the single script and looped over by releaseMany (release-many.ts).
 * KEYS[1] lock hash; KEYS[2] release channel (same hash tag, so same slot)
 * ARGV[1] owner, ARGV[2] leaseMs, ARGV[3] "1" to use SPUBLISH (Cluster) instead of PUBLISH
 * Returns {0, 0} not-owner (nothing deleted); {1, left} decremented (TTL raised to leaseMs, never lowered);
 * {2, 0} released: the key is deleted, and the channel is published to only if a waiter marked `~waiters`.
 */
export const RELEASE_BODY = `
local function release_one(k, ch, o, lease, sharded)
  if redis.call('hexists', k, o) == 0 then return 0, 0 end
  local left = redis.call('hincrby', k, o, -1)
  if left > 0 then
    if redis.call('pttl', k) < tonumber(lease) then redis.call('pexpire', k, lease) end
    return 1, left
  end
  local waiting = redis.call('hexists', k, '~waiters')
  redis.call('del', k)
  if waiting == 1 then
    if sharded == '1' then redis.call('spublish', ch, '1') else redis.call('publish', ch, '1') end
  end
  return 2, 0
end
`;

export const release = {
  name: "lockyardRelease",
  numberOfKeys: 2,
  lua: `${RELEASE_BODY}
return {release_one(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])}
`,
} as const;
