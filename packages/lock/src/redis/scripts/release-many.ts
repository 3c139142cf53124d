import { RELEASE_BODY } from "./release.js";

/**
 * releaseMany: the release body (release.ts) looped over N locks, for the per-tick batcher.
 * KEYS[2i-1] lock hash i, KEYS[2i] release channel i
 * ARGV[1] "1" to use SPUBLISH (Cluster) instead of PUBLISH; ARGV[2i] owner i, ARGV[2i+1] leaseMs i
 * Returns a flat array, two entries per lock, in order, as release does, or {-1, message} when that lock's
 * commands raised an error; the others are unaffected.
 */
export const releaseMany = {
  name: "lockyardReleaseMany",
  // Variable: the caller passes the key count first.
  numberOfKeys: undefined,
  lua: `${RELEASE_BODY}
local out = {}
for i = 1, #KEYS / 2 do
  local ok, a, b = pcall(release_one, KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i], ARGV[2 * i + 1], ARGV[1])
  if ok then
    out[2 * i - 1], out[2 * i] = a, b
  else
    out[2 * i - 1], out[2 * i] = -1, type(a) == 'table' and (a.err or 'ERR') or tostring(a)
  end
end
return out
`,
} as const;
