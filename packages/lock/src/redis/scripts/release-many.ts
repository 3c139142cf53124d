import { RELEASE_BODY } from "./release.js";

/**
 * releaseMany: the release body (release.ts) looped over N locks, for the per-tick batcher.
 * KEYS[5i-4..5i] lock hash, release channel, fence counter, waiter queue and entry leases of lock i
 * ARGV[1] "1" to use SPUBLISH (Cluster) instead of PUBLISH; ARGV[1+7(i-1)+1..7] owner, leaseMs, token,
 * qleaseMs, next waiter, its leaseMs and keepMs of lock i (as release's ARGV[1], [2], [4], [5], [6], [7], [8])
 * Returns a flat array, four entries per lock, in order, as release does (the third -1 and the fourth 0 where
 * release returns two), or {-1, message, -1, 0} when that lock's commands raised an error; the others are unaffected.
 */
export const releaseMany = {
  name: "lockyardReleaseMany",
  // Variable: the caller passes the key count first.
  numberOfKeys: undefined,
  lua: `${RELEASE_BODY}
local out = {}
for i = 1, #KEYS / 5 do
  local a0, k0 = 1 + 7 * (i - 1), 5 * (i - 1)
  local ok, a, b, c, d = pcall(release_one, KEYS[k0 + 1], KEYS[k0 + 2], KEYS[k0 + 3], KEYS[k0 + 4], KEYS[k0 + 5],
    ARGV[a0 + 1], ARGV[a0 + 2], ARGV[1], ARGV[a0 + 3], ARGV[a0 + 4], ARGV[a0 + 5], ARGV[a0 + 6], ARGV[a0 + 7])
  if ok then
    out[4 * i - 3], out[4 * i - 2], out[4 * i - 1], out[4 * i] = a, b, c or -1, d or 0
  else
    out[4 * i - 3], out[4 * i - 2], out[4 * i - 1], out[4 * i] = -1, type(a) == 'table' and (a.err or 'ERR') or tostring(a), -1, 0
  end
end
return out
`,
} as const;
