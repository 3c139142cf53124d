// Sent with callScript (redlock-send.ts), not defineCommand, to know whether a call ever left the process.

/**
 * redlockAcquire: `acquire` without the fence. A counter on independent nodes is not monotonic
 * (a restarted node starts again from 0), so Redlock hands out no token and keeps no `fence:` key.
 * KEYS[1] lock hash; ARGV[1] owner, ARGV[2] leaseMs, ARGV[3] "1" when more waiters queue behind the caller
 * Returns {1, count} acquired or re-entered, {0, pttl} held by another owner (which marks `~waiters`).
 */
export const redlockAcquire = {
  name: "lockyardRedlockAcquire",
  numberOfKeys: 1,
  lua: `
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], ARGV[1], 1)
  if ARGV[3] == '1' then redis.call('hset', KEYS[1], '~waiters', 1) end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {1, 1}
end
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  local count = redis.call('hincrby', KEYS[1], ARGV[1], 1)
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then redis.call('pexpire', KEYS[1], ARGV[2]) end
  return {1, count}
end
redis.call('hset', KEYS[1], '~waiters', 1)
return {0, redis.call('pttl', KEYS[1])}
`,
} as const;

/**
 * redlockRelease: `release`, except that the message carries the owner, so a waiter subscribed on N nodes
 * can tell one release (published by each node) from the next.
 * KEYS[1] lock hash, KEYS[2] channel; ARGV[1] owner, ARGV[2] leaseMs
 * Returns {0, 0} not-owner, {1, left} decremented, {2, 0} released.
 */
export const redlockRelease = {
  name: "lockyardRedlockRelease",
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
if waiting == 1 then redis.call('publish', KEYS[2], ARGV[1]) end
return {2, 0}
`,
} as const;
