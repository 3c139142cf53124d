"use client";

import { type DashboardHealth, dashboardHealth } from "~/lib/health";
import { useLiveConnection } from "./live-locks";
import { useSystemInfo } from "./use-system-info";

/** The live stream's state and whether the API behind it reaches Redis (see dashboardHealth). */
export function useDashboardHealth(): DashboardHealth {
  const stream = useLiveConnection().state;
  const info = useSystemInfo();
  return dashboardHealth(stream, info.data?.redis.reachable);
}
