import type { TRPCRouterRecord } from "@trpc/server";
import { runBurst } from "../demo/burst.js";
import { runScenario } from "../demo/scenario.js";
import { burstInput, scenarioInput } from "../schemas.js";
import { publicProcedure } from "../trpc.js";

export const demoRouter = {
  burst: publicProcedure
    .input(burstInput)
    .subscription(({ ctx, input, signal }) => runBurst(ctx, input, signal)),
  scenario: publicProcedure
    .input(scenarioInput)
    .subscription(({ ctx, input, signal }) => runScenario(ctx, input, signal)),
} satisfies TRPCRouterRecord;
