/**
 * releaseMany: the release script looped over N locks, for the per-tick batcher (one call per node or slot).
 * KEYS[2i-1] lock hash i, KEYS[2i] channel `lock-released:{r_i}`
 * ARGV[1] "1" to use SPUBLISH (Cluster) instead of PUBLISH; ARGV[2i] owner i, ARGV[2i+1] leaseMs i
 * Returns a flat array, two entries per lock, in order: {0, 0} not-owner (nothing deleted), {1, left}
 * decremented (TTL raised to leaseMs, never lowered), {2, 0} released (deleted; published only if a waiter
 * marked `~waiters`), or {-1, message} when that lock's commands raised an error; the others are unaffected.
 */
export const releaseMany = {
  name: "lockyardReleaseMany",
  // Variable: the caller passes the key count first.
  numberOfKeys: undefined,
  lua: `
local sharded = ARGV[1] == '1'
local function one(k, ch, o, lease)
  if redis.call('hexists', k, o) == 0 then return 0, 0 end
  local left = redis.call('hincrby', k, o, -1)
  if left > 0 then
    if redis.call('pttl', k) < tonumber(lease) then redis.call('pexpire', k, lease) end
    return 1, left
  end
  local waiting = redis.call('hexists', k, '~waiters')
  redis.call('del', k)
  if waiting == 1 then
    if sharded then redis.call('spublish', ch, '1') else redis.call('publish', ch, '1') end
  end
  return 2, 0
end
local out = {}
for i = 1, #KEYS / 2 do
  local ok, a, b = pcall(one, KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i], ARGV[2 * i + 1])
  if ok then
    out[2 * i - 1], out[2 * i] = a, b
  else
    out[2 * i - 1], out[2 * i] = -1, type(a) == 'table' and (a.err or 'ERR') or tostring(a)
  end
end
return out
`,
} as const;
