import type { TRPCRouterRecord } from "@trpc/server";
import { listAllLocks, lockSources } from "../locks/snapshot.js";
import { locksListInput, locksWatchInput } from "../schemas.js";
import { publicProcedure } from "../trpc.js";
import type { LocksSnapshot } from "../types.js";

export const locksRouter = {
  list: publicProcedure.input(locksListInput).query(
    async ({ ctx, input }): Promise<LocksSnapshot> => ({
      at: Date.now(),
      instanceId: ctx.config.instanceId,
      locks: await listAllLocks(ctx.redis, lockSources(ctx), input.prefix),
    }),
  ),
  /**
   * A snapshot, then deltas as locks come, change and go, from this instance's one observer (see
   * locks/feed.ts): any number of subscribers costs Redis the same as one. `intervalMs` and `lastEventId` are
   * accepted and ignored: a reconnect simply starts with a fresh snapshot.
   */
  watch: publicProcedure
    .input(locksWatchInput)
    .subscription(({ ctx, input, signal }) => ctx.lockFeed.watchLocks(input.prefix, signal)),
} satisfies TRPCRouterRecord;
