import type { Redis } from "ioredis";
import { defineScripts } from "../../lib/scripts.js";
import { SCENARIO_SLOTS_KEY, scenarioClientSlotsKey } from "./keys.js";

// KEYS[1] global set, KEYS[2] the client's set (member = runId, score = slot expiry, epoch ms).
// ARGV: now, expiry, runId, global limit, per-client limit. Expired slots (a crashed instance's) are
// dropped first. Returns 1 taken, 0 global limit reached, -1 client limit reached.
const takeLua = `
local now = tonumber(ARGV[1])
redis.call('zremrangebyscore', KEYS[1], '-inf', now)
redis.call('zremrangebyscore', KEYS[2], '-inf', now)
if redis.call('zcard', KEYS[2]) >= tonumber(ARGV[5]) then return -1 end
if redis.call('zcard', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('zadd', KEYS[1], ARGV[2], ARGV[3])
redis.call('zadd', KEYS[2], ARGV[2], ARGV[3])
local ttl = tonumber(ARGV[2]) - now
redis.call('pexpire', KEYS[1], ttl)
redis.call('pexpire', KEYS[2], ttl)
return 1
`;
// Extends a held slot (XX: never re-adds one that was freed); the sets' TTLs follow.
const renewLua = `
for i = 1, 2 do
  if redis.call('zadd', KEYS[i], 'XX', 'CH', ARGV[1], ARGV[2]) then
    redis.call('pexpire', KEYS[i], ARGV[3])
  end
end
return 1
`;

const scripts = defineScripts<{
  lockyardSlotTake(
    global: string,
    client: string,
    now: number,
    expiry: number,
    runId: string,
    max: number,
    maxPerClient: number,
  ): Promise<number>;
  lockyardSlotRenew(
    global: string,
    client: string,
    expiry: number,
    runId: string,
    ttl: number,
  ): Promise<number>;
}>(
  { name: "lockyardSlotTake", numberOfKeys: 2, lua: takeLua },
  { name: "lockyardSlotRenew", numberOfKeys: 2, lua: renewLua },
);

export interface SlotLimits {
  max: number;
  maxPerClient: number;
  leaseMs: number;
}

/** Takes a scenario slot, globally and for `client`: "ok", or which limit was reached. */
export async function takeScenarioSlot(
  redis: Redis,
  client: string,
  runId: string,
  limits: SlotLimits,
): Promise<"ok" | "global" | "client"> {
  const now = Date.now();
  const r = await scripts(redis).lockyardSlotTake(
    SCENARIO_SLOTS_KEY,
    scenarioClientSlotsKey(client),
    now,
    now + limits.leaseMs,
    runId,
    limits.max,
    limits.maxPerClient,
  );
  return r === 1 ? "ok" : r === 0 ? "global" : "client";
}

export async function renewScenarioSlot(redis: Redis, client: string, runId: string, leaseMs: number) {
  const expiry = Date.now() + leaseMs;
  await scripts(redis).lockyardSlotRenew(
    SCENARIO_SLOTS_KEY,
    scenarioClientSlotsKey(client),
    expiry,
    runId,
    leaseMs,
  );
}

export async function releaseScenarioSlot(redis: Redis, client: string, runId: string): Promise<void> {
  await redis.multi().zrem(SCENARIO_SLOTS_KEY, runId).zrem(scenarioClientSlotsKey(client), runId).exec();
}
