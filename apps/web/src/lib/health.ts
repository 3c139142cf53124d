import type { ConnectionState, IndicatorState } from "@lockyard/ui/connection-indicator";

export interface DashboardHealth {
  /** What the header's indicator shows. */
  indicator: IndicatorState;
  /** True while what the page shows may be out of date: the stream is down, or Redis behind it is. */
  stale: boolean;
  /** What the person can expect or do, when something is wrong. */
  advice: string | null;
}

export const REDIS_DOWN_ADVICE =
  "The API cannot reach Redis: locks show their last known state, and sales, orders and scenarios fail until Redis is back (the API reconnects by itself).";

/**
 * The live stream's state combined with what `system.info` says of Redis: the stream keeps sending
 * heartbeats while Redis is down, so on its own it would stay "Live" over a frozen lock table.
 */
export function dashboardHealth(
  stream: ConnectionState,
  redisReachable: boolean | undefined,
): DashboardHealth {
  if (stream === "connected" && redisReachable === false)
    return { indicator: "degraded", stale: true, advice: REDIS_DOWN_ADVICE };
  return { indicator: stream, stale: stream !== "connected", advice: null };
}
