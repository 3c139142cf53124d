"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "~/trpc/react";

const REFRESH_MS = 15_000;
/** While Redis is unreachable the page asks more often, so its return shows soon. */
const REFRESH_WHILE_REDIS_DOWN_MS = 3000;

/** The one `system.info` query of the page (instances, Redis, modes), shared by every panel. */
export function useSystemInfo() {
  const trpc = useTRPC();
  return useQuery(
    trpc.system.info.queryOptions(undefined, {
      refetchInterval: (q) =>
        q.state.data?.redis.reachable === false ? REFRESH_WHILE_REDIS_DOWN_MS : REFRESH_MS,
    }),
  );
}
