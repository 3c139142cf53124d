import { QUEUE_BODY } from "./queue.js";

/**
 * Locks that several owners may hold at once (the semaphore and the read-write lock): Lua helpers shared by
 * shared-acquire, shared-release and shared-renew-many. One HASH per lock, beside its fence counter (same
 * hash tag, same Cluster slot):
 *   field <owner>          "reads|writes|expiresAt|token": this owner's re-entry counts (a semaphore permit
 *                          counts as reads), the Redis time (ms) its lease ends, the token of its grant
 *   field ~waiters         a refused attempt was made: a release that frees a hold publishes `1`
 *   field ~writer-waits    Redis time (ms) until which a refused writer blocks new readers (the read-write
 *                          lock's writer preference; its waiter re-sets it with each look, so a dead writer's
 *                          mark runs out within one queue lease)
 *   field ~writer-by       "owner|before": the writer whose refusal set the mark last, and the mark it found
 *                          then (0: none); if that writer gives up it puts `before` back (shared-withdraw.ts)
 *                          instead of keeping readers out for the rest of its own mark
 *   field ~permits         the semaphore's permit count as last acquired with (for dashboards)
 * Semaphores also queue waiting processes fairly, in the mutex's queue keys (queue.ts: `q` LIST of owners,
 * `qt` HASH owner → Redis ms its entry lives): a free permit goes to a fresh attempt, or to the releasing
 * process's next waiter inside the release (shared-release.ts), only when fewer live entries queue ahead of it
 * than there are free permits (queued_ahead).
 * Every holder has a lease of its own: a holder whose lease ended is dropped by whoever looks next, and the
 * key's TTL is the latest lease (or mark), so an abandoned lock disappears by itself.
 */
export const SHARED_BODY = `${QUEUE_BODY}
local function holder_of(v)
  local r, w, e, t = string.match(v, '^(%d+)|(%d+)|(%d+)|(%d+)$')
  return {r = tonumber(r), w = tonumber(w), e = tonumber(e), t = tonumber(t)}
end
local function holder_value(h)
  return string.format('%d|%d|%d|%d', h.r, h.w, h.e, h.t)
end
-- Drops ended leases; counts the live holders and writers; finds the caller's hold and the soonest/latest ends.
local function holders(k, o, now)
  local all = redis.call('hgetall', k)
  local s = {n = 0, writers = 0, soonest = nil, latest = 0, mine = nil, writer_waits = 0, waiting = false}
  for i = 1, #all, 2 do
    local f, v = all[i], all[i + 1]
    if f == '~writer-waits' then s.writer_waits = tonumber(v)
    elseif f == '~waiters' then s.waiting = true
    elseif f ~= '~permits' and f ~= '~writer-by' then
      local h = holder_of(v)
      if h.e <= now then
        redis.call('hdel', k, f)
      else
        s.n = s.n + 1
        if h.w > 0 then s.writers = s.writers + 1 end
        if not s.soonest or h.e < s.soonest then s.soonest = h.e end
        if h.e > s.latest then s.latest = h.e end
        if f == o then s.mine = h end
      end
    end
  end
  return s
end
-- Live queue entries ahead of o (all of them when o has none), and the soonest end of their leases. Dead
-- entries found on the way are dropped.
local function queued_ahead(q, qt, o, now)
  local ahead, soonest = 0, nil
  for _, e in ipairs(redis.call('lrange', q, 0, -1)) do
    if e == o then return ahead, soonest end
    local ends = tonumber(redis.call('hget', qt, e) or '0')
    if ends < now then
      redis.call('lrem', q, 1, e)
      redis.call('hdel', qt, e)
    else
      ahead = ahead + 1
      if not soonest or ends < soonest then soonest = ends end
    end
  end
  return ahead, soonest
end
-- A semaphore's free permits when every one of them is owed to a live queue entry: those entries' owners, in
-- queue order (dead entries found on the way are dropped). nil when it is not a semaphore, or when fewer live
-- entries queue than permits are free (then anyone may take one).
local function owed_entries(k, q, qt, n, now)
  local free = tonumber(redis.call('hget', k, '~permits') or '0') - n
  if free <= 0 then return nil end
  local owed = {}
  for _, e in ipairs(redis.call('lrange', q, 0, -1)) do
    if tonumber(redis.call('hget', qt, e) or '0') < now then
      redis.call('lrem', q, 1, e)
      redis.call('hdel', qt, e)
    else
      owed[#owed + 1] = e
      if #owed == free then return owed end
    end
  end
  return nil
end
-- The ~writer-by value for writer o refusing now: the mark it found, unless o set the mark last already (then
-- what it found then stands).
local function writer_by(k, o, found)
  local by = redis.call('hget', k, '~writer-by')
  if by then
    local owner, before = string.match(by, '^(.*)|(%d+)$')
    if owner == o then return by end
  end
  return o .. '|' .. string.format('%d', found)
end
-- The key lives as long as its latest lease or a live writer mark; with neither it goes.
local function keep_alive(k, latest, writer_waits, now)
  local until_ms = math.max(latest, writer_waits)
  if until_ms <= now then
    redis.call('del', k)
  else
    redis.call('pexpire', k, until_ms - now)
  end
end
`;
