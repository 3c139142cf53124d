import { QUEUE_BODY } from "./queue.js";

/**
 * acquire: one Lua body, used by the single script and looped over by acquireMany (acquire-many.ts).
 * KEYS[1] lock hash `<prefix>{r}` (field = owner, value = re-entry count); KEYS[2] fence counter;
 * KEYS[3] waiter queue; KEYS[4] its entry leases (queue.ts; all four share the hash tag, so one slot)
 * ARGV[1] owner, ARGV[2] leaseMs,
 * ARGV[3] "1" when the caller knows more waiters are queued behind it, so its release must publish,
 * ARGV[4] join: "1" for a waiting acquire with an owner name of its own (never a re-entry): refused, it
 *   joins the queue (or refreshes its entry); finding the lock handed to it, it adopts it (count 1, full lease),
 * ARGV[5] qleaseMs, how long a queue entry lives unrefreshed
 * Returns {1, count, token} when acquired, adopted or re-entered, or {0, pttl, fence} when another owner holds
 * it, or when it is free but a live waiter queues ahead (pttl = how long that entry lives at most; fence = the
 * last token issued, 0 none: a handoff to this owner announced with a greater token ran after this call).
 * A refused attempt sets the `~waiters` field, so the holder's release publishes: nobody pays for a PUBLISH
 * when nobody waits. Re-entry never shortens the TTL (another handle of the same owner may hold a longer
 * lease); it clears a `~handed` mark, so the owner's later attempts count as re-entries, never adoptions.
 *
 * Tokens: a fresh acquisition (and a handoff) gets max(last token + 1, Redis TIME in µs). The fence key
 * therefore need not live forever (it expires FENCE_RETENTION_MS after its last use, so Redis does not grow
 * per distinct resource), and tokens still strictly increase after it expired, as long as Redis's clock does
 * not step back by more than that retention. The token is taken before anything is written, so an error
 * there (a fence key of the wrong type) leaves no lock behind without a handle; a refusal reads the fence before
 * it writes too, so such an error leaves no waiter mark or queue entry either.
 */
export const ACQUIRE_BODY = `${QUEUE_BODY}
local function acquire_one(k, f, q, qt, o, lease, more, join, qlease)
  if redis.call('exists', k) == 0 then
    local head, now = queue_head(q, qt)
    if head and head ~= o then
      local fence = fence_of(f)
      if join == '1' then join_queue(q, qt, o, now, tonumber(qlease)) end
      return 0, math.max(1, tonumber(redis.call('hget', qt, head)) - now), fence
    end
    local token = next_token(f)
    if head then drop_entry(q, qt, o) end
    redis.call('hset', k, o, 1)
    if more == '1' then redis.call('hset', k, '~waiters', 1) end
    redis.call('pexpire', k, lease)
    return 1, 1, token
  end
  if redis.call('hexists', k, o) == 1 then
    local token = tonumber(redis.call('get', f) or '0')
    if token == 0 then token = next_token(f) else redis.call('pexpire', f, FENCE_RETENTION_MS) end
    if redis.call('hget', k, '~handed') == o then
      redis.call('hdel', k, '~handed')
      if join == '1' then
        if more == '1' then redis.call('hset', k, '~waiters', 1) end
        redis.call('pexpire', k, lease)
        return 1, 1, token
      end
    end
    local count = redis.call('hincrby', k, o, 1)
    if redis.call('pttl', k) < tonumber(lease) then redis.call('pexpire', k, lease) end
    return 1, count, token
  end
  local fence = fence_of(f)
  redis.call('hset', k, '~waiters', 1)
  if join == '1' then join_queue(q, qt, o, now_ms(), tonumber(qlease)) end
  return 0, redis.call('pttl', k), fence
end
`;

export const acquire = {
  name: "lockyardAcquire",
  numberOfKeys: 4,
  lua: `${ACQUIRE_BODY}
return {acquire_one(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])}
`,
} as const;
