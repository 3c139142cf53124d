import { SHARED_BODY } from "./shared-body.js";

/**
 * sharedRelease: gives back one hold of a semaphore or read-write lock (layout: shared-body.ts).
 * KEYS[1] lock hash; KEYS[2] release channel; KEYS[3] waiter queue; KEYS[4] entry leases (a semaphore's);
 * KEYS[5] fence counter
 * ARGV[1] owner, ARGV[2] mode: "read" (also a semaphore permit) or "write", ARGV[3] the token the hold was
 * granted with ("" when unknown), ARGV[4] "1" to use SPUBLISH (Cluster), ARGV[5] a semaphore's: the
 * releasing process's next waiter ("" none), ARGV[6] that waiter's leaseMs, ARGV[7] qleaseMs
 * Returns {0, 0} not-owner (no such live hold of that mode, or the owner's hold is a newer grant than the
 * token); {1, left} decremented (the owner still holds `left`); {2, 0} released: the owner's last hold went;
 * {4, token, free}: it went, and the freed permit was granted to ARGV[5] with that token (`free` permits are
 * still free after it), as an attempt of its own
 * would have been (fewer live queue entries ahead of it than free permits): a handoff within the process that
 * costs it no call. Refused, ARGV[5] joins the queue (its process's entry went with the permit it holds) and the
 * lock is marked `~waiters`, as a refused attempt of its own would have done.
 * The channel is published to when a refused attempt marked `~waiters` and the release let someone in: the
 * owner's last hold went, or its last write hold went while it keeps reads (a downgrade). The message is `1`
 * (whoever waits looks), or, on a semaphore whose free permits are all owed to queued processes,
 * `n:<owner> <owner>...` naming their entries: only those processes look, and the mark stays for the others.
 * Unlike the mutex, the token is checked against the hold's own: several owners take tokens at once.
 */
export const sharedRelease = {
  name: "lockyardSharedRelease",
  numberOfKeys: 5,
  lua: `${SHARED_BODY}
local k, ch, q, qt, f = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local o, mode, token, sharded = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local nxt, nlease, qlease = ARGV[5] or '', ARGV[6], ARGV[7]
local v = redis.call('hget', k, o)
if not v then return {0, 0} end
local now = now_ms()
local h = holder_of(v)
if h.e <= now or (token ~= '' and string.format('%d', h.t) ~= token) then return {0, 0} end
if mode == 'write' then
  if h.w == 0 then return {0, 0} end
  h.w = h.w - 1
else
  if h.r == 0 then return {0, 0} end
  h.r = h.r - 1
end
if h.r + h.w > 0 then
  redis.call('hset', k, o, holder_value(h))
  -- A downgrade (the owner's last write hold goes, its reads stay) lets readers in: wake them.
  if mode == 'write' and h.w == 0 and redis.call('hexists', k, '~waiters') == 1 then
    redis.call('hdel', k, '~waiters')
    announce(ch, sharded, '1')
  end
  return {1, h.r + h.w}
end
redis.call('hdel', k, o)
local s = holders(k, o, now)
if nxt ~= '' then
  local permits = tonumber(redis.call('hget', k, '~permits') or '0')
  if s.n < permits and queued_ahead(q, qt, nxt, now) < permits - s.n then
    local granted = next_token(f)
    local others_queue = false
    if redis.call('exists', q) == 1 then
      drop_entry(q, qt, nxt)
      others_queue = redis.call('llen', q) > 0
      if s.n + 1 < permits and others_queue then announce(ch, sharded, '1') end
    end
    local ends = now + tonumber(nlease)
    redis.call('hset', k, nxt, holder_value({r = 1, w = 0, e = ends, t = granted}))
    -- Its process may have more waiters, which wait for a release now rather than try (no permit is free).
    redis.call('hset', k, '~waiters', 1)
    keep_alive(k, math.max(s.latest, ends), s.writer_waits, now)
    return {4, granted, permits - s.n - 1}
  end
  keep_entry(q, qt, nxt, now, tonumber(qlease))
  redis.call('hset', k, '~waiters', 1)
  s.waiting = true
end
if s.waiting then
  local owed = owed_entries(k, q, qt, s.n, now)
  if owed then
    announce(ch, sharded, 'n:' .. table.concat(owed, ' '))
  else
    redis.call('hdel', k, '~waiters')
    announce(ch, sharded, '1')
  end
end
keep_alive(k, s.latest, s.writer_waits, now)
return {2, 0}
`,
} as const;
