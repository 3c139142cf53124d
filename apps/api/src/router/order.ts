import type { TRPCRouterRecord } from "@trpc/server";
import { listOrders, readOrder } from "../orders/store.js";
import { submitOrder } from "../orders/submit.js";
import { orderGetInput, orderListInput, orderSubmitInput } from "../schemas.js";
import { publicProcedure } from "../trpc.js";
import type { Order } from "../types.js";

export const orderRouter = {
  submit: publicProcedure.input(orderSubmitInput).mutation(({ ctx, input }) => submitOrder(ctx, input)),
  get: publicProcedure
    .input(orderGetInput)
    .query(({ ctx, input }): Promise<Order | null> => readOrder(ctx.redis, input.orderId)),
  list: publicProcedure.input(orderListInput).query(
    async ({ ctx, input }): Promise<{ orders: Order[] }> => ({
      orders: await listOrders(ctx.redis, input.limit),
    }),
  ),
} satisfies TRPCRouterRecord;
