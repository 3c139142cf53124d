/**
 * renew
 * KEYS[1] lock hash; ARGV[1] owner, ARGV[2] leaseMs
 * Returns 1 if the owner still holds the lock (its TTL is raised to leaseMs, never lowered), else 0.
 * It never re-creates a missing key.
 */
export const renew = {
  name: "lockyardRenew",
  numberOfKeys: 1,
  lua: `
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then redis.call('pexpire', KEYS[1], ARGV[2]) end
return 1
`,
} as const;
