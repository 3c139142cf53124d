/**
 * redlockAcquire: `acquire` (acquire.ts) on one node of a Redlock quorum, without the fence and without a
 * count. A counter on independent nodes is not monotonic (a restarted node starts again from 0), so Redlock
 * hands out no token and keeps no `fence:` key. Re-entry is counted in the process (redlock/holds.ts), so a
 * node holds each owner once: asked again by the owner it already holds for (an earlier attempt whose undo
 * was lost, or a hold whose validity ran out locally), it grants again with count 1 and never shortens the
 * TTL. A refusal marks `~waiters` as acquire's does; test/redis/redlock-scripts.test.ts compares the two.
 * KEYS[1] lock hash
 * ARGV[1] owner, ARGV[2] leaseMs, ARGV[3] "1" when more waiters queue behind the caller
 * Returns {1, 1} acquired (or held already by this owner), {0, pttl, holder} held by the owner `holder` (and
 * `~waiters` marked): an attempt refused by a quorum of one holder undoes its partial grant without waking
 * anyone (redlock/acquire.ts).
 * Sent with callScript (redlock/send.ts), not defineCommand, to know whether a call ever left the process.
 */
export const redlockAcquire = {
  name: "lockyardRedlockAcquire",
  numberOfKeys: 1,
  lua: `
local function acquire_once(k, o, lease, more)
  if redis.call('exists', k) == 0 then
    redis.call('hset', k, o, 1)
    if more == '1' then redis.call('hset', k, '~waiters', 1) end
    redis.call('pexpire', k, lease)
    return 1, 1
  end
  if redis.call('hexists', k, o) == 1 then
    if redis.call('pttl', k) < tonumber(lease) then redis.call('pexpire', k, lease) end
    return 1, 1
  end
  redis.call('hset', k, '~waiters', 1)
  local holder = ''
  for _, f in ipairs(redis.call('hkeys', k)) do
    if f ~= '~waiters' then holder = f break end
  end
  return 0, redis.call('pttl', k), holder
end
return {acquire_once(KEYS[1], ARGV[1], ARGV[2], ARGV[3])}
`,
} as const;
