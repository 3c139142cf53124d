import { SHARED_BODY } from "./shared-body.js";

/**
 * sharedLeave: a waiting semaphore acquire that gave up (timed out, aborted, closed) leaves the queue
 * (shared-body.ts). KEYS[1] waiter queue; KEYS[2] entry leases; KEYS[3] release channel
 * ARGV[1] owner, ARGV[2] "1" to use SPUBLISH (Cluster), ARGV[3] successor: the process's next waiter for this
 * semaphore ("" or absent: none), ARGV[4] qleaseMs (the successor's entry lease)
 * Returns 2 when the successor took the leaver's place (the queue is the same length, nobody behind moves up:
 * nothing is announced); 1 when the entry was dropped, and then, as entries behind it may now fit into the free
 * permits, `1` is announced if any remain; 0 when it had none. A successor that queues already keeps its own place.
 */
export const sharedLeave = {
  name: "lockyardSharedLeave",
  numberOfKeys: 3,
  lua: `${SHARED_BODY}
local q, qt, ch, o, sharded = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2]
local succ, qlease = ARGV[3] or '', tonumber(ARGV[4] or '0')
local pos = redis.call('lpos', q, o)
if pos and succ ~= '' and not redis.call('lpos', q, succ) then
  redis.call('lset', q, pos, succ)
  redis.call('hdel', qt, o)
  keep_entry(q, qt, succ, now_ms(), qlease, false)
  return 2
end
local had = redis.call('lrem', q, 1, o)
redis.call('hdel', qt, o)
if had > 0 and redis.call('llen', q) > 0 then announce(ch, sharded, '1') end
return had
`,
} as const;
