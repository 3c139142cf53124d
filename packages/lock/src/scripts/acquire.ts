/**
 * acquire
 * KEYS[1] lock hash `<prefix>{r}` (field = owner, value = re-entry count)
 * KEYS[2] fence counter `fence:{r}`
 * ARGV[1] owner, ARGV[2] leaseMs,
 * ARGV[3] "1" when the caller knows more waiters are queued behind it, so its release must publish
 * Returns {1, count, token} when acquired or re-entered (token: the fence value, INCR'd on a fresh acquire only),
 * or {0, pttl} when another owner holds it. A failed attempt also sets the `~waiters` field, so the holder's
 * release publishes on `lock-released:{r}`: nobody pays for a PUBLISH when nobody waits.
 * Re-entry never shortens the TTL (another handle of the same owner may hold a longer lease).
 */
export const acquire = {
  name: "lockyardAcquire",
  numberOfKeys: 2,
  lua: `
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], ARGV[1], 1)
  if ARGV[3] == '1' then redis.call('hset', KEYS[1], '~waiters', 1) end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {1, 1, redis.call('incr', KEYS[2])}
end
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  local count = redis.call('hincrby', KEYS[1], ARGV[1], 1)
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then redis.call('pexpire', KEYS[1], ARGV[2]) end
  return {1, count, tonumber(redis.call('get', KEYS[2]) or '0')}
end
redis.call('hset', KEYS[1], '~waiters', 1)
return {0, redis.call('pttl', KEYS[1])}
`,
} as const;
