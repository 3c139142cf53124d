// The seed's three Lua scripts, as in its DistributedLockService / RedisLockHandle (.NET, StackExchange.Redis).

/** KEYS[1] lock; ARGV owner, leaseMs → 1 acquired (or re-entered), 0 held by someone else. */
export const LOCK = `
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
return 0`;

/** KEYS[1] lock; ARGV owner, leaseMs → 1 released or decremented, 0 not the owner. */
export const UNLOCK = `
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return 0
end
local counter = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if counter <= 0 then
  redis.call('del', KEYS[1])
  return 1
end
redis.call('pexpire', KEYS[1], ARGV[2])
return 1`;

/** KEYS[1] lock; ARGV owner, leaseMs → 1 renewed, 0 no longer ours. */
export const RENEW = `
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0`;
