/**
 * acquire: one Lua body, used by the single script and looped over by acquireMany (acquire-many.ts).
 * KEYS[1] lock hash `<prefix>{r}` (field = owner, value = re-entry count)
 * KEYS[2] fence counter (same hash tag, so same slot)
 * ARGV[1] owner, ARGV[2] leaseMs,
 * ARGV[3] "1" when the caller knows more waiters are queued behind it, so its release must publish
 * Returns {1, count, token} when acquired or re-entered, or {0, pttl, 0} when another owner holds it.
 * A refused attempt sets the `~waiters` field, so the holder's release publishes: nobody pays for a PUBLISH
 * when nobody waits. Re-entry never shortens the TTL (another handle of the same owner may hold a longer lease).
 *
 * Tokens: a fresh acquisition gets max(last token + 1, Redis TIME in µs). The fence key therefore need not
 * live forever (it expires FENCE_RETENTION_MS after its last use, so Redis does not grow per distinct
 * resource), and tokens still strictly increase after it expired, as long as Redis's clock does not step
 * back by more than that retention. The token is taken before anything is written, so an error there
 * (a fence key of the wrong type) leaves no lock behind without a handle.
 */
export const ACQUIRE_BODY = `
local FENCE_RETENTION_MS = 86400000
local function next_token(f)
  local t = redis.call('time')
  local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local token = math.max(tonumber(redis.call('get', f) or '0') + 1, now_us)
  redis.call('set', f, string.format('%d', token), 'px', FENCE_RETENTION_MS)
  return token
end
local function acquire_one(k, f, o, lease, more)
  if redis.call('exists', k) == 0 then
    local token = next_token(f)
    redis.call('hset', k, o, 1)
    if more == '1' then redis.call('hset', k, '~waiters', 1) end
    redis.call('pexpire', k, lease)
    return 1, 1, token
  end
  if redis.call('hexists', k, o) == 1 then
    local token = tonumber(redis.call('get', f) or '0')
    if token == 0 then token = next_token(f) else redis.call('pexpire', f, FENCE_RETENTION_MS) end
    local count = redis.call('hincrby', k, o, 1)
    if redis.call('pttl', k) < tonumber(lease) then redis.call('pexpire', k, lease) end
    return 1, count, token
  end
  redis.call('hset', k, '~waiters', 1)
  return 0, redis.call('pttl', k), 0
end
`;

export const acquire = {
  name: "lockyardAcquire",
  numberOfKeys: 2,
  lua: `${ACQUIRE_BODY}
return {acquire_one(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])}
`,
} as const;
