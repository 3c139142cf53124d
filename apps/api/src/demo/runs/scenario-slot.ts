import { TRPCError } from "@trpc/server";
import type { Context } from "../../context.js";
import { takeScenarioSlot } from "./slots.js";

/**
 * Takes a scenario slot for `runId` (MAX_SCENARIOS at a time across every instance, MAX_SCENARIOS_PER_CLIENT
 * per client address), or refuses with TOO_MANY_REQUESTS naming the limit reached.
 */
export async function takeSlotOrRefuse(
  ctx: Context,
  client: string,
  runId: string,
  leaseMs: number,
): Promise<void> {
  const slot = await takeScenarioSlot(ctx.redis, client, runId, {
    max: ctx.config.maxScenarios,
    maxPerClient: ctx.config.maxScenariosPerClient,
    leaseMs,
  });
  if (slot === "ok") return;
  throw new TRPCError({
    code: "TOO_MANY_REQUESTS",
    message:
      slot === "global"
        ? `${ctx.config.maxScenarios} scenarios are running already (MAX_SCENARIOS); try again when one ends`
        : `you already run ${ctx.config.maxScenariosPerClient} scenario(s) (MAX_SCENARIOS_PER_CLIENT)`,
  });
}
