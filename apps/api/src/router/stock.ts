import type { TRPCRouterRecord } from "@trpc/server";
import { stockDeductInput, stockGetInput, stockResetInput } from "../schemas.js";
import { deduct } from "../stock/deduct.js";
import { readStock, resetStock } from "../stock/store.js";
import { adminProcedure, publicProcedure } from "../trpc.js";

export const stockRouter = {
  get: publicProcedure.input(stockGetInput).query(({ ctx, input }) => readStock(ctx.redis, input.productId)),
  reset: adminProcedure
    .input(stockResetInput)
    .mutation(({ ctx, input }) => resetStock(ctx.redis, input.productId, input.qty)),
  deduct: publicProcedure
    .input(stockDeductInput)
    .mutation(({ ctx, input, signal }) => deduct(ctx, input, signal)),
} satisfies TRPCRouterRecord;
