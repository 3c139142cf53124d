import { SHARED_BODY } from "./shared-body.js";

/**
 * sharedLeave: a waiting semaphore acquire that gave up (timed out, aborted, closed) leaves the queue
 * (shared-body.ts). KEYS[1] waiter queue; KEYS[2] entry leases; KEYS[3] release channel
 * ARGV[1] owner, ARGV[2] "1" to use SPUBLISH (Cluster)
 * Returns 1 when it had an entry. Entries behind it may now fit into the free permits: when any remain,
 * `1` is announced so their processes' heads look.
 */
export const sharedLeave = {
  name: "lockyardSharedLeave",
  numberOfKeys: 3,
  lua: `${SHARED_BODY}
local q, qt, ch, o, sharded = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2]
local had = redis.call('lrem', q, 1, o)
redis.call('hdel', qt, o)
if had > 0 and redis.call('llen', q) > 0 then announce(ch, sharded, '1') end
return had
`,
} as const;
