/**
 * redlockRelease: `release` (release.ts) on one node of a Redlock quorum, without a count and with the owner
 * as the message. A node holds each owner once (re-entry is counted in the process, redlock/holds.ts), so the
 * release deletes the key whenever the owner holds it: run twice (a retry after a lost reply), the second
 * run answers not-owner and takes nothing from anyone. The message carries the owner (each node publishes
 * its own copy, and every copy wakes: see redlock/subscriber.ts). Independent nodes are never a
 * Cluster, so it always uses PUBLISH, and only when `~waiters` is marked, as release does;
 * test/redis/redlock-scripts.test.ts compares the two. A PUBLISH Redis denies (an ACL user without the channel)
 * is skipped, as in queue.ts's announce: a lost message, not a failed release.
 * KEYS[1] lock hash, KEYS[2] channel
 * ARGV[1] owner, ARGV[2] leaseMs (unused: kept so every release takes the same arguments), ARGV[3] "0" to
 * publish nothing: the undo of an attempt that another owner's quorum refused frees no lock, and its message
 * would only send the waiters to try again while that owner holds (absent: "1")
 * Returns {0, 0} not-owner, {2, 0} released.
 * Sent with callScript (redlock/send.ts), not defineCommand, to know whether a call ever left the process.
 */
export const redlockRelease = {
  name: "lockyardRedlockRelease",
  numberOfKeys: 2,
  lua: `
local function release_once(k, ch, o, announce)
  if redis.call('hexists', k, o) == 0 then return 0, 0 end
  local waiting = redis.call('hexists', k, '~waiters')
  redis.call('del', k)
  if waiting == 1 and announce ~= '0' then redis.pcall('publish', ch, o) end
  return 2, 0
end
return {release_once(KEYS[1], KEYS[2], ARGV[1], ARGV[3])}
`,
} as const;
