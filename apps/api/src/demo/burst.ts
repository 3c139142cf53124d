import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import type { StockMode } from "../schemas.js";
import type { BurstEvent } from "../types.js";

export interface BurstRequest {
  productId: string;
  requests: number;
  initialStock: number;
  mode: StockMode;
  workMs: number;
}

export async function* runBurst(
  _ctx: Context,
  _req: BurstRequest,
  _signal: AbortSignal | undefined,
): AsyncGenerator<BurstEvent> {
  throw new TRPCError({ code: "NOT_IMPLEMENTED", message: "demo.burst is not implemented yet" });
}
