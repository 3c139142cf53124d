import type { Redis } from "ioredis";
import { isHousekeeping } from "./connections.js";

export type CommandStats = Map<string, { calls: number; usec: number }>;

/**
 * `INFO commandstats` as command → calls and total µs. Includes the commands Lua scripts run (Redis 7 counts
 * those too); an EVALSHA's µs cover its whole script.
 */
export async function commandStats(redis: Redis): Promise<CommandStats> {
  const text = await redis.info("commandstats");
  const out: CommandStats = new Map();
  for (const line of text.split("\n")) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (m) out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return out;
}

/** Mean µs Redis spent per EVAL/EVALSHA between two snapshots: how long each script call blocked Redis. */
export function scriptUsecPerCall(before: CommandStats, after: CommandStats): number {
  let calls = 0;
  let usec = 0;
  for (const cmd of ["eval", "evalsha"]) {
    calls += (after.get(cmd)?.calls ?? 0) - (before.get(cmd)?.calls ?? 0);
    usec += (after.get(cmd)?.usec ?? 0) - (before.get(cmd)?.usec ?? 0);
  }
  return calls > 0 ? usec / calls : Number.NaN;
}

/** Server-side command counts between two snapshots, housekeeping (INFO, FLUSHALL, CLIENT…) left out. */
export function statsDelta(before: CommandStats, after: CommandStats): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [cmd, { calls }] of after) {
    if (isHousekeeping(cmd)) continue;
    const d = calls - (before.get(cmd)?.calls ?? 0);
    if (d > 0) out[cmd] = d;
  }
  return out;
}

export const sum = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);
