import type { Redis } from "ioredis";
import { defineScripts } from "../../lib/scripts.js";
import { BURST_GUARD_KEY } from "./keys.js";

// KEYS[1] guard; ARGV[1] runId, ARGV[2] lease ms. Returns "" when taken, else the running run's id.
const acquireLua = `
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return '' end
return redis.call('get', KEYS[1]) or ''
`;
// Owner-checked: only the run that holds the guard renews or frees it.
const renewLua = `
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
`;
const releaseLua = `
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
`;

const scripts = defineScripts<{
  lockyardBurstGuardAcquire(key: string, runId: string, leaseMs: number): Promise<string>;
  lockyardBurstGuardRenew(key: string, runId: string, leaseMs: number): Promise<number>;
  lockyardBurstGuardRelease(key: string, runId: string): Promise<number>;
}>(
  { name: "lockyardBurstGuardAcquire", numberOfKeys: 1, lua: acquireLua },
  { name: "lockyardBurstGuardRenew", numberOfKeys: 1, lua: renewLua },
  { name: "lockyardBurstGuardRelease", numberOfKeys: 1, lua: releaseLua },
);

/**
 * One burst at a time across every instance. Returns null when `runId` now holds the guard, else the id of
 * the run that does. The lease is renewed by the run's heartbeat, so a crashed instance frees it.
 */
export async function acquireBurstGuard(
  redis: Redis,
  runId: string,
  leaseMs: number,
): Promise<string | null> {
  const holder = await scripts(redis).lockyardBurstGuardAcquire(BURST_GUARD_KEY, runId, leaseMs);
  return holder === "" ? null : holder;
}

export async function renewBurstGuard(redis: Redis, runId: string, leaseMs: number): Promise<boolean> {
  return (await scripts(redis).lockyardBurstGuardRenew(BURST_GUARD_KEY, runId, leaseMs)) === 1;
}

export async function releaseBurstGuard(redis: Redis, runId: string): Promise<void> {
  await scripts(redis).lockyardBurstGuardRelease(BURST_GUARD_KEY, runId);
}
