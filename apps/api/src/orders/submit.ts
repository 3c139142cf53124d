import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import { sleep } from "../lib/sleep.js";
import type { OrderSubmitResult } from "../types.js";
import { readOrder, storeOrder } from "./store.js";

export interface SubmitRequest {
  orderId: string;
  productId: string;
  quantity: number;
}

/**
 * Idempotent submit: the lock makes concurrent duplicates fail fast (CONFLICT), and the stored
 * order makes later duplicates replay it. Checking inside the lock is what makes "exactly once" hold.
 */
export async function submitOrder(ctx: Context, req: SubmitRequest): Promise<OrderSubmitResult> {
  // Lease longer than processing; the watchdog is not needed for a bounded step.
  const lock = await ctx.locks.tryAcquire(`order:submit:${req.orderId}`, {
    leaseMs: Math.max(5_000, ctx.config.orderProcessingMs * 4),
  });
  if (!lock) {
    throw new TRPCError({ code: "CONFLICT", message: `order ${req.orderId} is being submitted right now` });
  }
  try {
    const existing = await readOrder(ctx.redis, req.orderId);
    if (existing) return { order: existing, replayed: true };
    await sleep(ctx.config.orderProcessingMs, lock.signal);
    const order = {
      orderId: req.orderId,
      productId: req.productId,
      quantity: req.quantity,
      status: "created" as const,
      createdAt: Date.now(),
      instanceId: ctx.config.instanceId,
      token: lock.token,
    };
    await storeOrder(ctx.redis, order, ctx.config.orderRetentionMs);
    return { order, replayed: false };
  } finally {
    await lock.release().catch((err: unknown) => ctx.logger.warn({ err }, "order lock release failed"));
  }
}
