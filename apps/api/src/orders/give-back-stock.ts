import { fencedWrite } from "@lockyard/lock";
import type { Context } from "../context.js";
import { stockKey, stockResource } from "../stock/keys.js";
import type { OrderItem } from "../types.js";
import { stockLockOf } from "./take-stock.js";

/**
 * Puts the items an order took back into stock, under their stock locks and with fenced writes: a submit
 * whose order turned out to exist already (a resubmission created it while this submit's lock was lost)
 * must not keep the stock it took.
 */
export async function giveBackStock(ctx: Context, items: readonly OrderItem[]): Promise<void> {
  const all = await ctx.locks.acquire(
    items.map((i) => stockResource(i.productId)),
    { waitMs: ctx.config.lockWaitMs },
  );
  try {
    for (const item of items) {
      const { token } = stockLockOf(all, item.productId);
      const put = await fencedWrite(ctx.redis, stockKey(item.productId), token ?? 0, item.quantity);
      if (!put.ok)
        ctx.logger.error({ item, put }, "stock taken by a duplicate order could not be given back");
    }
  } finally {
    await all.release().catch((err: unknown) => ctx.logger.warn({ err }, "stock locks release failed"));
  }
}
