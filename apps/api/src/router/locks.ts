import type { TRPCRouterRecord } from "@trpc/server";
import { listAllLocks, lockSources } from "../locks/snapshot.js";
import { watchLocks } from "../locks/watch.js";
import { locksListInput, locksWatchInput } from "../schemas.js";
import { publicProcedure } from "../trpc.js";
import type { LocksSnapshot } from "../types.js";

export const locksRouter = {
  list: publicProcedure.input(locksListInput).query(
    async ({ ctx, input }): Promise<LocksSnapshot> => ({
      at: Date.now(),
      instanceId: ctx.config.instanceId,
      locks: await listAllLocks(lockSources(ctx), input.prefix),
    }),
  ),
  watch: publicProcedure.input(locksWatchInput).subscription(({ ctx, input, signal }) =>
    watchLocks(() => lockSources(ctx), {
      instanceId: ctx.config.instanceId,
      prefix: input.prefix,
      intervalMs: input.intervalMs,
      signal,
    }),
  ),
} satisfies TRPCRouterRecord;
