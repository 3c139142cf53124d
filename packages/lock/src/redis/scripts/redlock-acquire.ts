/**
 * redlockAcquire: `acquire` (acquire.ts) on one node of a Redlock quorum, without the fence. A counter on
 * independent nodes is not monotonic (a restarted node starts again from 0), so Redlock hands out no token
 * and keeps no `fence:` key. Everything else (first grant, re-entry that never shortens the TTL, refusal that
 * marks `~waiters`) is acquire's; test/redis/redlock-scripts.test.ts runs both on the same inputs.
 * KEYS[1] lock hash
 * ARGV[1] owner, ARGV[2] leaseMs, ARGV[3] "1" when more waiters queue behind the caller
 * Returns {1, count} acquired or re-entered, {0, pttl} held by another owner (and `~waiters` marked).
 * Sent with callScript (redlock/send.ts), not defineCommand, to know whether a call ever left the process.
 */
export const redlockAcquire = {
  name: "lockyardRedlockAcquire",
  numberOfKeys: 1,
  lua: `
local function acquire_unfenced(k, o, lease, more)
  if redis.call('exists', k) == 0 then
    redis.call('hset', k, o, 1)
    if more == '1' then redis.call('hset', k, '~waiters', 1) end
    redis.call('pexpire', k, lease)
    return 1, 1
  end
  if redis.call('hexists', k, o) == 1 then
    local count = redis.call('hincrby', k, o, 1)
    if redis.call('pttl', k) < tonumber(lease) then redis.call('pexpire', k, lease) end
    return 1, count
  end
  redis.call('hset', k, '~waiters', 1)
  return 0, redis.call('pttl', k)
end
return {acquire_unfenced(KEYS[1], ARGV[1], ARGV[2], ARGV[3])}
`,
} as const;
