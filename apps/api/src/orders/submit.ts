import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import { sleep } from "../lib/sleep.js";
import type { Order, OrderItem, OrderSubmitResult } from "../types.js";
import { readOrder, storeOrder } from "./store.js";
import { takeStock, type WantedItem } from "./take-stock.js";

/** The seed's single product (an order record only), or `items` taken from stock: one of the two (schemas.ts). */
export interface SubmitRequest {
  orderId: string;
  productId?: string | undefined;
  quantity?: number | undefined;
  items?: WantedItem[] | undefined;
}

/**
 * Idempotent submit: the lock makes concurrent duplicates fail fast (CONFLICT), and the stored
 * order makes later duplicates replay it. Checking inside the lock is what makes "exactly once" hold.
 * An order of `items` takes them from stock under their stock locks, all at once (take-stock.ts).
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
    let items: OrderItem[];
    if (req.items) {
      // The processing runs under the stock locks: the stock it checked is the stock it writes.
      items = await takeStock(ctx, req.items, ctx.config.orderProcessingMs);
    } else {
      await sleep(ctx.config.orderProcessingMs, lock.signal);
      items = [{ productId: req.productId ?? "", quantity: req.quantity ?? 1, token: null }];
    }
    const order: Order = {
      orderId: req.orderId,
      productId: items[0]!.productId,
      quantity: items.reduce((n, i) => n + i.quantity, 0),
      status: "created",
      createdAt: Date.now(),
      instanceId: ctx.config.instanceId,
      token: lock.token,
      items,
      fromStock: req.items !== undefined,
    };
    await storeOrder(ctx.redis, order, ctx.config.orderRetentionMs);
    return { order, replayed: false };
  } finally {
    await lock.release().catch((err: unknown) => ctx.logger.warn({ err }, "order lock release failed"));
  }
}
