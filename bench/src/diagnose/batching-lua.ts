// Batched forms of Lockyard's acquire/release, for the diagnosis only: N locks per script call.

/** KEYS lock_i, fence_i pairs; ARGV owner_i, leaseMs_i pairs → per lock the fence token, or -1 when held. */
export const ACQUIRE_MANY = `
local out = {}
for i = 1, #KEYS / 2 do
  local k, f, o, lease = KEYS[2*i-1], KEYS[2*i], ARGV[2*i-1], ARGV[2*i]
  if redis.call('exists', k) == 0 then
    redis.call('hset', k, o, 1)
    redis.call('pexpire', k, lease)
    out[i] = redis.call('incr', f)
  else
    redis.call('hset', k, '~waiters', 1)
    out[i] = -1
  end
end
return out`;

/** KEYS lock_i, channel_i pairs; ARGV owner_i → per lock 0 not-owner, 1 decremented, 2 released. */
export const RELEASE_MANY = `
local out = {}
for i = 1, #KEYS / 2 do
  local k, ch, o = KEYS[2*i-1], KEYS[2*i], ARGV[i]
  local n = redis.call('hget', k, o)
  if not n then out[i] = 0
  elseif tonumber(n) > 1 then redis.call('hincrby', k, o, -1); out[i] = 1
  else
    local waiting = redis.call('hlen', k) > 1
    redis.call('del', k)
    if waiting then redis.call('publish', ch, '1') end
    out[i] = 2
  end
end
return out`;
