import type { TRPCRouterRecord } from "@trpc/server";
import { TRPCError } from "@trpc/server";
import { startBurst } from "../demo/burst.js";
import { runReadWriteDemo } from "../demo/read-write/run.js";
import { markRun, readRunMeta } from "../demo/runs/store.js";
import { watchRun } from "../demo/runs/watch.js";
import { startScenario } from "../demo/scenario.js";
import { burstInput, readWriteDemoInput, runCancelInput, runWatchInput, scenarioInput } from "../schemas.js";
import { adminProcedure, publicProcedure } from "../trpc.js";

/**
 * Starting a run is a mutation (POST only, so no link, image or EventSource can start one); watching it is a
 * subscription that only reads, so a reconnect resumes and never re-runs anything.
 */
export const demoRouter = {
  burst: {
    start: adminProcedure.input(burstInput).mutation(({ ctx, input }) => startBurst(ctx, input)),
  },
  scenario: {
    start: adminProcedure.input(scenarioInput).mutation(({ ctx, input }) => startScenario(ctx, input)),
  },
  /** Plays the read-write story (readers, a writer that waits for them, readers after it): timeline + verdict. */
  readWrite: {
    run: adminProcedure.input(readWriteDemoInput).mutation(({ ctx, input }) => runReadWriteDemo(ctx, input)),
  },
  runs: {
    watch: publicProcedure
      .input(runWatchInput)
      .subscription(({ ctx, input, signal }) => watchRun(ctx, input.runId, input.lastEventId, signal)),
    /** Cancels a run wherever it executes; a burst's outstanding requests are aborted. */
    cancel: adminProcedure.input(runCancelInput).mutation(async ({ ctx, input }) => {
      const meta = await readRunMeta(ctx.redis, input.runId);
      if (!meta) throw new TRPCError({ code: "NOT_FOUND", message: `no demo run ${input.runId}` });
      if (meta.status === "finished") return { cancelled: false };
      if (!ctx.runs.cancel(input.runId, "cancelled")) {
        await markRun(ctx.redis, input.runId, { cancel: 1 }, ctx.config.runRetentionS);
      }
      return { cancelled: true };
    }),
  },
} satisfies TRPCRouterRecord;
