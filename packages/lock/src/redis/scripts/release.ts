import { QUEUE_BODY } from "./queue.js";

/**
 * release: one Lua body, used by the single script and looped over by releaseMany (release-many.ts).
 * KEYS[1] lock hash; KEYS[2] release channel; KEYS[3] fence counter; KEYS[4] waiter queue; KEYS[5] entry
 * leases (queue.ts; all share the hash tag, so one slot)
 * ARGV[1] owner, ARGV[2] leaseMs, ARGV[3] "1" to use SPUBLISH (Cluster) instead of PUBLISH,
 * ARGV[4] the token the releasing hold was granted with ("" when unknown), ARGV[5] qleaseMs,
 * ARGV[6] the releasing process's next waiter for this lock ("" none), ARGV[7] that waiter's leaseMs,
 * ARGV[8] keepMs: grant it to that waiter even when other processes' waiters queue, as long as the first of
 *   them has queued for less than keepMs (a bounded local streak: 0 never, 2^53 - 1 always)
 * Returns {0, 0} not-owner (nothing deleted); {1, left} decremented (TTL raised to leaseMs, never lowered);
 * or, when the last count goes: {3, token} handed to the first live queued waiter (announced `c:<owner> <token> <qlease>`),
 * {4, token, waited, others} granted to ARGV[6] (no live entry queued ahead of it, or within ARGV[8]) with token
 * ARGV[4] + 1 (when given), waited = how long the first other queued entry has waited (ms, -1 none), others = how
 * many entries of other processes queue (0 none); {2, 0} released: the key is deleted,
 * and the channel is published to only if a waiter marked `~waiters`.
 *
 * The token check: every fresh grant moves the fence counter, re-entries do not. When the counter no longer
 * holds the releasing hold's token, the key it was granted in is gone (expired, evicted, lost in a failover)
 * and the owner's name was granted afresh since (a re-entry re-creating it): decrementing would take a count
 * that belongs to the newer holds and could free the lock under them. That is not-owner. A counter that has
 * expired itself (no use in FENCE_RETENTION_MS) proves nothing either way, so the owner check alone decides.
 */
export const RELEASE_BODY = `${QUEUE_BODY}
local function release_one(k, ch, f, q, qt, o, lease, sharded, token, qlease, nxt, nlease, keep_ms)
  local count = redis.call('hget', k, o)
  if not count then return 0, 0 end
  if token ~= '' then
    local current = redis.call('get', f)
    if current and current ~= token then return 0, 0 end
  end
  if tonumber(count) > 1 then
    local left = redis.call('hincrby', k, o, -1)
    if redis.call('pttl', k) < tonumber(lease) then redis.call('pexpire', k, lease) end
    return 1, left
  end
  local waiting = redis.call('hexists', k, '~waiters')
  redis.call('del', k)
  return hand_over(k, ch, f, q, qt, sharded, tonumber(qlease), nxt, nlease, tonumber(keep_ms), waiting, token)
end
`;

export const release = {
  name: "lockyardRelease",
  numberOfKeys: 5,
  lua: `${RELEASE_BODY}
return {release_one(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5],
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])}
`,
} as const;
