import { RELEASE_BODY } from "./release.js";

/**
 * releaseMany: the release body (release.ts) looped over N locks, for the per-tick batcher.
 * KEYS[3i-2] lock hash i, KEYS[3i-1] release channel i, KEYS[3i] fence counter i
 * ARGV[1] "1" to use SPUBLISH (Cluster) instead of PUBLISH; ARGV[3i-1] owner i, ARGV[3i] leaseMs i,
 * ARGV[3i+1] token i ("" when unknown)
 * Returns a flat array, two entries per lock, in order, as release does, or {-1, message} when that lock's
 * commands raised an error; the others are unaffected.
 */
export const releaseMany = {
  name: "lockyardReleaseMany",
  // Variable: the caller passes the key count first.
  numberOfKeys: undefined,
  lua: `${RELEASE_BODY}
local out = {}
for i = 1, #KEYS / 3 do
  local ok, a, b = pcall(
    release_one, KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i], ARGV[3 * i - 1], ARGV[3 * i], ARGV[1], ARGV[3 * i + 1])
  if ok then
    out[2 * i - 1], out[2 * i] = a, b
  else
    out[2 * i - 1], out[2 * i] = -1, type(a) == 'table' and (a.err or 'ERR') or tostring(a)
  end
end
return out
`,
} as const;
