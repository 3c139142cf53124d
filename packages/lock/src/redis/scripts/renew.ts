/**
 * renew: one Lua body, used by the single script and looped over by renewMany (renew-many.ts).
 * KEYS[1] lock hash; ARGV[1] owner, ARGV[2] leaseMs
 * Returns 1 if the owner still holds the lock (its TTL is raised to leaseMs, never lowered), else 0.
 * It never re-creates a missing key.
 */
export const RENEW_BODY = `
local function renew_one(k, o, lease)
  if redis.call('hexists', k, o) == 0 then return 0 end
  if redis.call('pttl', k) < tonumber(lease) then redis.call('pexpire', k, lease) end
  return 1
end
`;

export const renew = {
  name: "lockyardRenew",
  numberOfKeys: 1,
  lua: `${RENEW_BODY}
return renew_one(KEYS[1], ARGV[1], ARGV[2])
`,
} as const;
