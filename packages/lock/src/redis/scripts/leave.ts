import { QUEUE_BODY } from "./queue.js";

/**
 * leave: a waiting acquire that gave up (timed out, aborted, closed) leaves the waiter queue (queue.ts).
 * KEYS[1] lock hash; KEYS[2] release channel; KEYS[3] fence counter; KEYS[4] waiter queue; KEYS[5] entry leases
 * ARGV[1] owner, ARGV[2] successor: the process's next waiter for this lock ("" none), ARGV[3] its leaseMs,
 * ARGV[4] "1" to use SPUBLISH (Cluster), ARGV[5] qleaseMs
 * Returns {0, 0} left (the successor takes the leaver's place in the queue, and its waiting time, if it has none of
 * its own and holds nothing: a successor the lock was just handed to, its message still on the way, would else be
 * queued again behind its own grant, and handed the lock again once it passed it on);
 * when the lock had been handed to the leaver meanwhile: {4, token} passed on to the successor with its full
 * lease, else as release: {3, token} handed to the next live entry, {2, 0} freed.
 */
export const LEAVE_BODY = `${QUEUE_BODY}
local function leave_one(k, ch, f, q, qt, o, succ, slease, sharded, qlease)
  if redis.call('hget', k, '~handed') == o then
    if succ ~= '' then
      drop_entry(q, qt, succ)
      local token = next_token(f)
      redis.call('hdel', k, o)
      redis.call('hset', k, succ, 1, '~handed', succ)
      redis.call('pexpire', k, slease)
      return 4, token
    end
    local waiting = redis.call('hexists', k, '~waiters')
    redis.call('del', k)
    -- The leaver is done: an entry of its own left in the queue must not be handed the lock back.
    drop_entry(q, qt, o)
    return hand_over(k, ch, f, q, qt, sharded, qlease, '', 0, 0, waiting, '')
  end
  local pos = redis.call('lpos', q, o)
  if pos and succ ~= '' and not redis.call('lpos', q, succ) and redis.call('hexists', k, succ) == 0 then
    redis.call('lset', q, pos, succ)
    local since = redis.call('hget', qt, 'since ' .. o)
    redis.call('hdel', qt, o, 'since ' .. o)
    redis.call('hset', qt, succ, now_ms() + qlease)
    if since then redis.call('hset', qt, 'since ' .. succ, since) end
  else
    drop_entry(q, qt, o)
  end
  return 0, 0
end
`;

export const leave = {
  name: "lockyardLeave",
  numberOfKeys: 5,
  lua: `${LEAVE_BODY}
return {leave_one(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]))}
`,
} as const;
