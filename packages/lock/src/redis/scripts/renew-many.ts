import { RENEW_BODY } from "./renew.js";

/**
 * renewMany: the renew body (renew.ts) looped over N locks: the watchdog's batch, one call per node
 * (per slot on a Cluster).
 * KEYS[i] lock hash i; ARGV[2i-1] owner i, ARGV[2i] leaseMs i
 * Returns an array with, for each key in order, 1 if its owner still holds it (TTL raised to the lease), else 0.
 */
export const renewMany = {
  name: "lockyardRenewMany",
  // Variable: the caller passes the key count first.
  numberOfKeys: undefined,
  lua: `${RENEW_BODY}
local out = {}
for i = 1, #KEYS do
  out[i] = renew_one(KEYS[i], ARGV[2 * i - 1], ARGV[2 * i])
end
return out
`,
} as const;
