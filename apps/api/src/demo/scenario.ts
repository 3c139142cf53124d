import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import type { ScenarioName } from "../schemas.js";
import type { ScenarioEvent } from "../types.js";

export async function* runScenario(
  _ctx: Context,
  _req: { name: ScenarioName; timeScale: number },
  _signal: AbortSignal | undefined,
): AsyncGenerator<ScenarioEvent> {
  throw new TRPCError({ code: "NOT_IMPLEMENTED", message: "demo.scenario is not implemented yet" });
}
