import { LockLostError } from "@lockyard/lock";
import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import { sleep } from "../lib/sleep.js";
import type { Order, OrderItem, OrderSubmitResult } from "../types.js";
import { giveBackStock } from "./give-back-stock.js";
import { assertSameOrder } from "./same-order.js";
import { createOrder, readOrder } from "./store.js";
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
 * order makes later duplicates replay it (a CONFLICT when the id comes back with a different order).
 * Checking inside the lock is what makes "exactly once" hold.
 * An order of `items` takes them from stock under their stock locks, all at once (take-stock.ts).
 */
export async function submitOrder(ctx: Context, req: SubmitRequest): Promise<OrderSubmitResult> {
  // Watchdog-renewed, not a fixed lease: an order of items may wait LOCK_WAIT_MS for its stock locks, and a
  // fixed lease shorter than that let a resubmission in while the first was still working (two orders, stock
  // taken twice). A crashed instance's lock still ends within the lease.
  const lock = await ctx.locks.tryAcquire(`order:submit:${req.orderId}`);
  if (!lock) {
    throw new TRPCError({ code: "CONFLICT", message: `order ${req.orderId} is being submitted right now` });
  }
  // Waits and processing end when the lock is lost or the instance shuts down, always before a write.
  const call = ctx.drain.watch(lock.signal);
  try {
    const existing = await readOrder(ctx.redis, req.orderId);
    if (existing) {
      assertSameOrder(existing, req);
      return { order: existing, replayed: true };
    }
    let items: OrderItem[];
    if (req.items) {
      // The processing runs under the stock locks: the stock it checked is the stock it writes.
      items = await takeStock(ctx, req.items, { workMs: ctx.config.orderProcessingMs, signal: call.signal });
    } else {
      await sleep(ctx.config.orderProcessingMs, call.signal);
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
    // Created only if absent: should this submit's lock have been lost after the stock was taken, a
    // resubmission may have created the order meanwhile. Then that order stands and this one's stock goes back.
    const first = await createOrder(ctx.redis, order, ctx.config.orderRetentionMs);
    if (first !== "created") {
      if (order.fromStock) await giveBackStock(ctx, items);
      assertSameOrder(first, req);
      return { order: first, replayed: true };
    }
    return { order, replayed: false };
  } catch (error) {
    throw lockLost(error, req.orderId) ?? error;
  } finally {
    call.end();
    await lock.release().catch((err: unknown) => ctx.logger.warn({ err }, "order lock release failed"));
  }
}

/**
 * A lock lost before the stock writes (the submit lock, or a stock lock during the processing): a clear
 * "try again", not an internal error. Nothing was taken: a lock lost later surfaces as a refused write.
 */
function lockLost(error: unknown, orderId: string): TRPCError | undefined {
  if (!(error instanceof LockLostError)) return undefined;
  return new TRPCError({
    code: "SERVICE_UNAVAILABLE",
    message: `lock "${error.resource}" was lost before order ${orderId} was written (Redis lost it, or this instance paused past its lease): nothing was taken, try again`,
    cause: error,
  });
}
