import { INTEGER_FIELD_LUA } from "./integer-field.js";

/**
 * fencedRead: a read under the lock that registers the reader's token on the guarded hash, so a write from
 * an older token that lands after this read is STALE (a holder that paused past its lease cannot overwrite
 * what a newer holder already read). Sent right after an acquire attempt (the `reads` option): it registers
 * only when the owner holds the lock at that moment, so a refused attempt's read writes nothing.
 * KEYS[1] lock hash, KEYS[2] fence counter of the lock, KEYS[3] the guarded hash
 * ARGV[1] owner, ARGV[2] fence field of the guarded hash, ARGV[3..] fields to read
 * Returns {state, v1, v2, …}: state 1 read under the lock (token registered), 0 not the holder (values read
 * all the same), -1 STALE (the hash already saw a newer token: this holder's lock is gone).
 * Errors (nothing written) when the holder's fence field holds anything but an integer of at most 2^53 - 1.
 */
export const fencedRead = {
  name: "lockyardFencedRead",
  numberOfKeys: 3,
  lua: `
${INTEGER_FIELD_LUA}
local state = 0
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  local token = tonumber(redis.call('get', KEYS[2]) or '0')
  local fence, bad = integerField(KEYS[3], ARGV[2])
  if not fence then return bad end
  if token < fence then
    state = -1
  else
    state = 1
    if token > fence then redis.call('hset', KEYS[3], ARGV[2], string.format('%d', token)) end
  end
end
local out = {state}
for i = 3, #ARGV do out[#out + 1] = redis.call('hget', KEYS[3], ARGV[i]) or false end
return out
`,
} as const;
