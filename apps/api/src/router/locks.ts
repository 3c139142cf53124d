import type { TRPCRouterRecord } from "@trpc/server";
import { listLocks } from "../locks/snapshot.js";
import { watchLocks } from "../locks/watch.js";
import { locksListInput, locksWatchInput } from "../schemas.js";
import { publicProcedure } from "../trpc.js";
import type { LocksSnapshot } from "../types.js";

export const locksRouter = {
  list: publicProcedure.input(locksListInput).query(
    async ({ ctx, input }): Promise<LocksSnapshot> => ({
      at: Date.now(),
      instanceId: ctx.config.instanceId,
      locks: await listLocks(ctx.locks, input.prefix),
    }),
  ),
  watch: publicProcedure.input(locksWatchInput).subscription(({ ctx, input, signal }) =>
    watchLocks(ctx.locks, {
      instanceId: ctx.config.instanceId,
      prefix: input.prefix,
      intervalMs: input.intervalMs,
      signal,
    }),
  ),
} satisfies TRPCRouterRecord;
