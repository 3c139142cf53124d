import type { Redis } from "ioredis";
import { isHousekeeping } from "./connections.js";

export type CommandStats = Map<string, number>;

/** `INFO commandstats` as command → calls. Includes the commands Lua scripts run (Redis 7 counts those too). */
export async function commandStats(redis: Redis): Promise<CommandStats> {
  const text = await redis.info("commandstats");
  const out: CommandStats = new Map();
  for (const line of text.split("\n")) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

/** Server-side command counts between two snapshots, housekeeping (INFO, FLUSHALL, CLIENT…) left out. */
export function statsDelta(before: CommandStats, after: CommandStats): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [cmd, n] of after) {
    if (isHousekeeping(cmd)) continue;
    const d = n - (before.get(cmd) ?? 0);
    if (d > 0) out[cmd] = d;
  }
  return out;
}

export const sum = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);
