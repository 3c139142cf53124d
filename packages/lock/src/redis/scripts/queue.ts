/**
 * The waiter queue and the handoff: Lua helpers shared by acquire, release and leave (each script includes
 * this body once). Per lock, beside the hash and the fence counter (same hash tag, same Cluster slot):
 *   KEY q   LIST of waiting owners, oldest first (at most one per process and lock: the local head's)
 *   KEY qt  HASH owner → Redis time (ms) until which that entry is alive, and `since <owner>` → Redis time (ms)
 *           the entry joined (the space keeps it apart from any owner id); the semaphore's queue has no `since`
 * An entry is a lease too: its waiter refreshes it with every re-check (join), and an entry not refreshed
 * for `qlease` ms is dead, skipped and dropped by whoever looks at the queue next. Both keys expire by
 * themselves once no entry has been refreshed for `qlease`.
 *
 * A release that frees the lock hands it over in the same script (hand_over): to the first live entry,
 * with a claim lease of `qlease` and the field `~handed` naming the new owner, announced as
 * `c:<owner> <token> <qlease>` on that owner's process's own channel, `<release channel>:<instance id>` (see
 * handoff_channel), so the other waiting processes are not woken for it. (Before, it went to the release channel,
 * which every waiting process hears; a process of such a build handed the lock now adopts it at its re-check.) That waiter holds it from the message alone when it can
 * prove the claim is live (a refusal it heard answered a fence below that token, so the handoff ran after that
 * refused call was sent: core/by-message.ts), else it adopts it with its next attempt (acquire with join = '1').
 * A dead or gone waiter never does either, so the claim runs out within `qlease` and the next entry's re-check
 * takes it.
 * With no live entry, or when the releasing process may keep it a while longer (a bounded streak of local
 * handoffs: while the first live entry has queued for less than `keep_ms`, which the process sets unbounded
 * for its first `localStreak` grants in a row), the releasing process's own next waiter (`nxt`) gets it at once,
 * with its full lease and the releasing hold's token + 1, and learns it from the release's reply (with how long
 * the first other process's entry has queued, -1 none, and how many entries queue); else the lock is free and a `~waiters` mark is
 * answered with the message `1`.
 */
export const QUEUE_BODY = `
local FENCE_RETENTION_MS = 86400000
local function next_token(f)
  local t = redis.call('time')
  local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local token = math.max(tonumber(redis.call('get', f) or '0') + 1, now_us)
  redis.call('set', f, string.format('%d', token), 'px', FENCE_RETENTION_MS)
  return token
end
-- A grant the releasing process kept for its own next waiter: the releasing hold's token + 1, so that
-- process knows the token before the reply (it lets that waiter start at once, see core/early.ts). The
-- caller has checked the fence holds \`prev\`, so this is above every token issued before; with the counter
-- gone (evicted, or unused for its retention) nothing vouches for \`prev\`, and time decides as for any grant.
local function kept_token(f, prev)
  local current = redis.call('get', f)
  if prev == '' or not current then return next_token(f) end
  local token = math.max(tonumber(prev), tonumber(current)) + 1
  redis.call('set', f, string.format('%d', token), 'px', FENCE_RETENTION_MS)
  return token
end
-- The last token issued, as a refused attempt reports it: a handoff announced with a greater token ran after it.
local function fence_of(f)
  return tonumber(redis.call('get', f) or '0')
end
local function now_ms()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function live_head(q, qt, now)
  while true do
    local head = redis.call('lindex', q, 0)
    if not head then return nil end
    if tonumber(redis.call('hget', qt, head) or '0') >= now then return head end
    redis.call('lpop', q)
    redis.call('hdel', qt, head, 'since ' .. head)
  end
end
-- The uncontended path pays one LINDEX for the queue, and no TIME: now is read only when someone queues.
local function queue_head(q, qt)
  if not redis.call('lindex', q, 0) then return nil, nil end
  local now = now_ms()
  return live_head(q, qt, now), now
end
local function keep_entry(q, qt, o, now, qlease, record_since)
  if not redis.call('lpos', q, o) then
    redis.call('rpush', q, o)
    if record_since then redis.call('hset', qt, 'since ' .. o, now) end
  end
  redis.call('hset', qt, o, now + qlease)
  if redis.call('pttl', q) < qlease then redis.call('pexpire', q, qlease) end
  if redis.call('pttl', qt) < qlease then redis.call('pexpire', qt, qlease) end
end
-- A waiting mutex acquire's entry: as keep_entry, and a new entry records when it joined.
local function join_queue(q, qt, o, now, qlease)
  keep_entry(q, qt, o, now, qlease, true)
end
local function drop_entry(q, qt, o)
  redis.call('lrem', q, 1, o)
  redis.call('hdel', qt, o, 'since ' .. o)
end
-- The releasing process keeps its turn while the first live entry has waited less than keep_ms (an entry
-- with no record of when it joined counts as waiting since ever: it is never passed over by time).
local function keeps_turn(qt, head, now, keep_ms)
  return now - tonumber(redis.call('hget', qt, 'since ' .. head) or '0') < keep_ms
end
-- pcall: a message Redis denies (an ACL user without the lock's channels) is a lost message, which every waiter
-- recovers from by its bounded look; raised, it failed the script after its writes, and the caller heard an error
-- for a release (or leave) that had freed or handed over the lock.
local function announce(ch, sharded, message)
  if sharded == '1' then redis.pcall('spublish', ch, message) else redis.pcall('publish', ch, message) end
end
-- A handoff is told only to the process it was handed to: the release channel plus ':' and the owner's
-- instance (its id less the last ':<random>' part), which only that process subscribes to beside the channel.
local function handoff_channel(ch, owner)
  return ch .. ':' .. (string.match(owner, '^(.*):[^:]*$') or owner)
end
-- How long the first entry of another process has queued (ms; -1 none): the releasing process predicts from it
-- whether its next release may keep the lock (keeps_turn), and then grants it before the reply. With it goes the
-- number of entries queued (other processes'; one not yet found dead counts too), by which that process divides
-- its time slice (locks-core.ts nameNext).
local function first_other_waited(q, qt, now)
  local first = redis.call('lindex', q, 0)
  if not first then return -1 end
  return now - tonumber(redis.call('hget', qt, 'since ' .. first) or '0')
end
local function hand_over(k, ch, f, q, qt, sharded, qlease, nxt, nlease, keep_ms, waiting, prev)
  local head, now = queue_head(q, qt)
  if head and head ~= nxt and not (nxt ~= '' and keeps_turn(qt, head, now, keep_ms)) then
    drop_entry(q, qt, head)
    local token = next_token(f)
    redis.call('hset', k, head, 1, '~handed', head)
    if waiting == 1 then redis.call('hset', k, '~waiters', 1) end
    redis.call('pexpire', k, qlease)
    if nxt ~= '' then join_queue(q, qt, nxt, now, qlease) end
    announce(handoff_channel(ch, head), sharded, string.format('c:%s %d %d', head, token, qlease))
    return 3, token
  end
  if nxt ~= '' then
    local waited, others = -1, 0
    if head then
      drop_entry(q, qt, nxt)
      waited = first_other_waited(q, qt, now)
      others = redis.call('llen', q)
    end
    local token = kept_token(f, prev)
    redis.call('hset', k, nxt, 1, '~handed', nxt)
    if waiting == 1 then redis.call('hset', k, '~waiters', 1) end
    redis.call('pexpire', k, nlease)
    return 4, token, waited, others
  end
  if waiting == 1 then announce(ch, sharded, '1') end
  return 2, 0
end
`;
