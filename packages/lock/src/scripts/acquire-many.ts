/**
 * acquireMany: the acquire script looped over N locks, for the per-tick batcher (one call per node or slot).
 * KEYS[2i-1] lock hash i, KEYS[2i] fence counter i
 * ARGV[3i-2] owner i, ARGV[3i-1] leaseMs i, ARGV[3i] "1" when more waiters queue behind caller i
 * Returns a flat array, three entries per lock, in order: {1, count, token} acquired or re-entered,
 * {0, pttl, 0} held by another owner (and `~waiters` marked), or {-1, message, 0} when that lock's commands
 * raised an error (e.g. WRONGTYPE): the other locks of the batch are unaffected, as with one call each.
 * Locks are handled one after another, so two entries for the same lock behave as two calls in that order.
 */
export const acquireMany = {
  name: "lockyardAcquireMany",
  // Variable: the caller passes the key count first.
  numberOfKeys: undefined,
  lua: `
local function one(k, f, o, lease, more)
  if redis.call('exists', k) == 0 then
    redis.call('hset', k, o, 1)
    if more == '1' then redis.call('hset', k, '~waiters', 1) end
    redis.call('pexpire', k, lease)
    return 1, 1, redis.call('incr', f)
  end
  if redis.call('hexists', k, o) == 1 then
    local count = redis.call('hincrby', k, o, 1)
    if redis.call('pttl', k) < tonumber(lease) then redis.call('pexpire', k, lease) end
    return 1, count, tonumber(redis.call('get', f) or '0')
  end
  redis.call('hset', k, '~waiters', 1)
  return 0, redis.call('pttl', k), 0
end
local out = {}
for i = 1, #KEYS / 2 do
  local ok, a, b, c = pcall(one, KEYS[2 * i - 1], KEYS[2 * i], ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i])
  if ok then
    out[3 * i - 2], out[3 * i - 1], out[3 * i] = a, b, c
  else
    out[3 * i - 2], out[3 * i - 1], out[3 * i] = -1, type(a) == 'table' and (a.err or 'ERR') or tostring(a), 0
  end
end
return out
`,
} as const;
