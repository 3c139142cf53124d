import type { TRPCRouterRecord } from "@trpc/server";
import { recentRuns } from "../jobs/runs.js";
import { jobsRunsInput } from "../schemas.js";
import { publicProcedure } from "../trpc.js";
import type { JobRun } from "../types.js";

export const jobsRouter = {
  runs: publicProcedure.input(jobsRunsInput).query(
    async ({ ctx, input }): Promise<{ intervalMs: number; runs: JobRun[] }> => ({
      intervalMs: ctx.config.jobIntervalMs,
      runs: await recentRuns(ctx.redis, input.limit),
    }),
  ),
} satisfies TRPCRouterRecord;
