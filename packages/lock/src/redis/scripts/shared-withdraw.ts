import { SHARED_BODY } from "./shared-body.js";

/**
 * sharedWithdraw: a writer of a read-write lock that gave up (timed out, aborted, tryAcquire refused, closed)
 * takes back the mark its refusals set, so new readers are not kept out for the rest of it (layout:
 * shared-body.ts). Only the writer that set the mark last may, and it puts back the mark it found (another
 * writer's, still waiting) rather than none.
 * KEYS[1] lock hash; KEYS[2] release channel
 * ARGV[1] owner, ARGV[2] "1" to use SPUBLISH (Cluster)
 * Returns 1 when it took its mark back, else 0. Readers kept out only by the mark sleep until it would have
 * ended: when any waited (`~waiters`) and no writer holds, `1` is announced so their processes' heads look.
 */
export const sharedWithdraw = {
  name: "lockyardSharedWithdraw",
  numberOfKeys: 2,
  lua: `${SHARED_BODY}
local k, ch, o, sharded = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local by = redis.call('hget', k, '~writer-by')
if not by then return 0 end
local owner, before = string.match(by, '^(.*)|(%d+)$')
if owner ~= o then return 0 end
local now = now_ms()
local s = holders(k, o, now)
local writer_waits = tonumber(before)
redis.call('hdel', k, '~writer-by')
if writer_waits > now then
  redis.call('hset', k, '~writer-waits', writer_waits)
else
  writer_waits = 0
  redis.call('hdel', k, '~writer-waits')
end
if s.waiting and s.writers == 0 and s.writer_waits > now then announce(ch, sharded, '1') end
keep_alive(k, s.latest, writer_waits, now)
return 1
`,
} as const;
