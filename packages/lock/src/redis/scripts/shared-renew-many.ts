import { SHARED_BODY } from "./shared-body.js";

/**
 * sharedRenewMany: the watchdog's batch for semaphores and read-write locks (layout: shared-body.ts).
 * KEYS[i] lock hash i; ARGV[2i-1] owner i, ARGV[2i] leaseMs i
 * Returns, per key in order, 1 if the owner's hold is still live (its lease now ends no sooner than now +
 * leaseMs, and the key lives at least as long), else 0 (an ended hold is dropped).
 */
export const sharedRenewMany = {
  name: "lockyardSharedRenewMany",
  numberOfKeys: undefined,
  lua: `${SHARED_BODY}
local now = now_ms()
local out = {}
for i = 1, #KEYS do
  local k, o, lease = KEYS[i], ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  local v = redis.call('hget', k, o)
  out[i] = 0
  if v then
    local h = holder_of(v)
    if h.e <= now then
      redis.call('hdel', k, o)
    else
      if now + lease > h.e then h.e = now + lease end
      redis.call('hset', k, o, holder_value(h))
      if redis.call('pttl', k) < h.e - now then redis.call('pexpire', k, h.e - now) end
      out[i] = 1
    end
  end
end
return out
`,
} as const;
