import { SHARED_BODY } from "./shared-body.js";

/**
 * sharedAcquire: one attempt on a semaphore or a read-write lock (layout: shared-body.ts).
 * KEYS[1] lock hash; KEYS[2] fence counter; KEYS[3] waiter queue; KEYS[4] entry leases; KEYS[5] release channel
 * ARGV[1] owner, ARGV[2] leaseMs, ARGV[3] "1" when more waiters queue behind the caller (its release must
 * publish), ARGV[4] mode: "permit" (semaphore), "read" or "write", ARGV[5] permits (mode permit),
 * ARGV[6] how long a refused writer's mark blocks new readers, ms (the mark names the writer that set it last
 * and the mark it found: a writer that gives up puts that back, shared-withdraw.ts), ARGV[7] join: "1" for a waiting
 * semaphore acquire under its own owner name (refused, it joins the queue or refreshes its entry),
 * ARGV[8] qleaseMs, ARGV[9] "1" to use SPUBLISH (Cluster)
 * Returns {1, count, token} granted or re-entered (count = the owner's holds, token = its grant's), or
 * {0, pttl, 0} refused (pttl = until the soonest hold, writer mark or queue entry ahead ends, at least 1).
 * A semaphore grant is fair across processes: a free permit is refused to a caller with at least as many
 * live entries queued ahead of it as there are free permits; a grant that leaves permits free while entries
 * still queue announces `1`, so the next process's head looks (nobody else would tell it); a grant while other
 * processes still queue marks `~waiters`, so the release that ends it publishes (see shared-release.ts).
 * Re-entry (same owner): always granted, and a writer may re-enter as reader; a reader may take the write
 * lock only while it is the sole holder (clearing the writer mark, as a fresh write grant does). Except a waiting semaphore acquire (join "1", a fresh owner name):
 * a permit under its name was handed to it by a release whose answer it missed, and it adopts it (count kept). A fresh grant takes a token like the mutex (next_token).
 */
export const SHARED_ACQUIRE_BODY = `${SHARED_BODY}
local function shared_acquire(k, f, q, qt, ch, o, lease, more, mode, permits, writer_mark, join, qlease, sharded)
  local now = now_ms()
  local s = holders(k, o, now)
  local ends = now + tonumber(lease)
  if mode == 'permit' then redis.call('hset', k, '~permits', permits) end
  local h = s.mine
  if h and join == '1' and mode == 'permit' then
    -- A waiting acquire's owner name is its own and fresh: a permit under it was granted by a release of its
    -- process whose answer it did not hear (shared-release.ts). It adopts that permit as the one hold it is.
    if ends > h.e then h.e = ends end
    redis.call('hset', k, o, holder_value(h))
    if more == '1' then redis.call('hset', k, '~waiters', 1) end
    keep_alive(k, math.max(s.latest, h.e), s.writer_waits, now)
    return {1, h.r, h.t}
  end
  if h and (mode ~= 'write' or h.w > 0 or s.n == 1) then
    local writer_waits = s.writer_waits
    if mode == 'write' and h.w == 0 then
      -- A reader taking the write lock is a writer now: as at a fresh write grant, the mark refused writers set
      -- (its own attempts' too) must not keep readers out once its write ends; readers it kept out look again.
      redis.call('hdel', k, '~writer-waits', '~writer-by')
      if writer_waits > now and s.waiting then announce(ch, sharded, '1') end
      writer_waits = 0
    end
    if mode == 'write' then h.w = h.w + 1 else h.r = h.r + 1 end
    if ends > h.e then h.e = ends end
    redis.call('hset', k, o, holder_value(h))
    if more == '1' then redis.call('hset', k, '~waiters', 1) end
    keep_alive(k, math.max(s.latest, h.e), writer_waits, now)
    return {1, h.r + h.w, h.t}
  end
  local free
  if mode == 'permit' then free = s.n < tonumber(permits)
  elseif mode == 'read' then free = s.writers == 0 and s.writer_waits <= now
  else free = s.n == 0 end
  local ahead, entry_ends = 0, nil
  if free and mode == 'permit' then
    ahead, entry_ends = queued_ahead(q, qt, o, now)
    free = ahead < tonumber(permits) - s.n
  end
  if not free then
    redis.call('hset', k, '~waiters', 1)
    if join == '1' then keep_entry(q, qt, o, now, tonumber(qlease)) end
    local writer_waits = s.writer_waits
    if mode == 'write' then
      writer_waits = math.max(writer_waits, now + tonumber(writer_mark))
      redis.call('hset', k, '~writer-waits', writer_waits, '~writer-by', writer_by(k, o, s.writer_waits))
    end
    keep_alive(k, s.latest, writer_waits, now)
    local next_end = s.soonest or writer_waits
    -- A reader kept out only by a writer's mark may come in when the mark ends (its writer may be gone).
    if mode == 'read' and s.writers == 0 then next_end = writer_waits end
    if entry_ends and (next_end == 0 or entry_ends < next_end) then next_end = entry_ends end
    return {0, math.max(1, next_end - now), 0}
  end
  local token = next_token(f)
  -- Other processes still queue: the lock stays marked as waited for (a release that names only the first
  -- of them leaves the rest to the next release's message).
  local others_queue = false
  if mode == 'permit' and redis.call('exists', q) == 1 then
    drop_entry(q, qt, o)
    others_queue = redis.call('llen', q) > 0
    if s.n + 1 < tonumber(permits) and others_queue then announce(ch, sharded, '1') end
  end
  local writer_waits = s.writer_waits
  if mode == 'write' then
    redis.call('hdel', k, '~writer-waits', '~writer-by')
    -- Readers kept out by the mark sleep until it would have ended; the writer now in has a lease of its own
    -- that may end sooner, and silently (a lease too short, a crash): they look again and learn when it ends.
    if writer_waits > now and s.waiting then announce(ch, sharded, '1') end
    writer_waits = 0
  end
  local mine = {r = 1, w = 0, e = ends, t = token}
  if mode == 'write' then mine = {r = 0, w = 1, e = ends, t = token} end
  redis.call('hset', k, o, holder_value(mine))
  if more == '1' or others_queue then redis.call('hset', k, '~waiters', 1) end
  keep_alive(k, math.max(s.latest, ends), writer_waits, now)
  return {1, 1, token}
end
`;

export const sharedAcquire = {
  name: "lockyardSharedAcquire",
  numberOfKeys: 5,
  lua: `${SHARED_ACQUIRE_BODY}
return shared_acquire(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5],
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
`,
} as const;
