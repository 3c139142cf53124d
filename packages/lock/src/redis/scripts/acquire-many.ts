import { ACQUIRE_BODY } from "./acquire.js";

/**
 * acquireMany: the acquire body (acquire.ts) looped over N locks, for the per-tick batcher (one call per
 * node or slot).
 * KEYS[4i-3..4i] lock hash, fence counter, waiter queue and entry leases of lock i
 * ARGV[5i-4..5i] owner, leaseMs, more, join and qleaseMs of lock i (as acquire's ARGV[1..5])
 * Returns a flat array, three entries per lock, in order: {1, count, token} acquired, adopted or re-entered,
 * {0, pttl, fence} refused (and `~waiters` marked), or {-1, message, 0} when that lock's commands raised an
 * error (e.g. WRONGTYPE): the other locks of the batch are unaffected, as with one call each.
 * Locks are handled one after another, so two entries for the same lock behave as two calls in that order.
 */
export const acquireMany = {
  name: "lockyardAcquireMany",
  // Variable: the caller passes the key count first.
  numberOfKeys: undefined,
  lua: `${ACQUIRE_BODY}
local out = {}
for i = 1, #KEYS / 4 do
  local a0, k0 = 5 * (i - 1), 4 * (i - 1)
  local ok, a, b, c = pcall(acquire_one, KEYS[k0 + 1], KEYS[k0 + 2], KEYS[k0 + 3], KEYS[k0 + 4],
    ARGV[a0 + 1], ARGV[a0 + 2], ARGV[a0 + 3], ARGV[a0 + 4], ARGV[a0 + 5])
  if ok then
    out[3 * i - 2], out[3 * i - 1], out[3 * i] = a, b, c
  else
    out[3 * i - 2], out[3 * i - 1], out[3 * i] = -1, type(a) == 'table' and (a.err or 'ERR') or tostring(a), 0
  end
end
return out
`,
} as const;
