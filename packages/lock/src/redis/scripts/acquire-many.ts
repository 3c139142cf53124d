import { ACQUIRE_BODY } from "./acquire.js";

/**
 * acquireMany: the acquire body (acquire.ts) looped over N locks, for the per-tick batcher (one call per
 * node or slot).
 * KEYS[2i-1] lock hash i, KEYS[2i] fence counter i
 * ARGV[3i-2] owner i, ARGV[3i-1] leaseMs i, ARGV[3i] "1" when more waiters queue behind caller i
 * Returns a flat array, three entries per lock, in order: {1, count, token} acquired or re-entered,
 * {0, pttl, 0} held by another owner (and `~waiters` marked), or {-1, message, 0} when that lock's commands
 * raised an error (e.g. WRONGTYPE): the other locks of the batch are unaffected, as with one call each.
 * Locks are handled one after another, so two entries for the same lock behave as two calls in that order.
 */
export const acquireMany = {
  name: "lockyardAcquireMany",
  // Variable: the caller passes the key count first.
  numberOfKeys: undefined,
  lua: `${ACQUIRE_BODY}
local out = {}
for i = 1, #KEYS / 2 do
  local ok, a, b, c = pcall(acquire_one, KEYS[2 * i - 1], KEYS[2 * i], ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i])
  if ok then
    out[3 * i - 2], out[3 * i - 1], out[3 * i] = a, b, c
  else
    out[3 * i - 2], out[3 * i - 1], out[3 * i] = -1, type(a) == 'table' and (a.err or 'ERR') or tostring(a), 0
  end
end
return out
`,
} as const;
