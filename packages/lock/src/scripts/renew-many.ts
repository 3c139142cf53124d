/**
 * renewMany: the watchdog's batched renew, one call per node (per slot on a Cluster).
 * KEYS[i] lock hash i; ARGV[2i-1] owner i, ARGV[2i] leaseMs i
 * Returns an array with, for each key in order, 1 if its owner still holds it (TTL raised to the lease), else 0.
 */
export const renewMany = {
  name: "lockyardRenewMany",
  // Variable: the caller passes the key count first.
  numberOfKeys: undefined,
  lua: `
local out = {}
for i = 1, #KEYS do
  if redis.call('hexists', KEYS[i], ARGV[2 * i - 1]) == 1 then
    local lease = tonumber(ARGV[2 * i])
    if redis.call('pttl', KEYS[i]) < lease then redis.call('pexpire', KEYS[i], lease) end
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
`,
} as const;
