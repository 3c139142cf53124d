import {
  type FencedReadResult,
  fencedRead,
  fencedWrite,
  fenceKey,
  type LockHandle,
  type MultiLockHandle,
} from "@lockyard/lock";
import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import { sleep } from "../lib/sleep.js";
import { stockKey, stockResource } from "../stock/keys.js";
import { assertKnownProduct } from "../stock/known-products.js";
import { writeFailure } from "../stock/write-outcome.js";
import type { OrderItem } from "../types.js";

export interface WantedItem {
  productId: string;
  quantity: number;
}

/**
 * Takes every item from stock, all or none. The products' stock locks are taken together
 * (`locks.acquire([...])`: distinct names in sorted order within one wait budget), so two orders of the same
 * products listed in opposite orders never hold one lock each while waiting for the other's. Under the locks:
 * each stock is read (fenced: a holder that lost the lock before us can no longer write), `work` runs (the
 * order's processing), and only if every product has enough is each one deducted with a fenced write.
 */
export async function takeStock(
  ctx: Context,
  items: readonly WantedItem[],
  opts: { workMs: number; signal: AbortSignal },
): Promise<OrderItem[]> {
  // Before locking: an unknown id would take a lock, and leave keys, per id a client invents.
  for (const item of items) await assertKnownProduct(ctx.redis, item.productId);
  const all = await ctx.locks
    .acquire(
      items.map((i) => stockResource(i.productId)),
      { waitMs: ctx.config.lockWaitMs, signal: opts.signal },
    )
    .catch((err: unknown) => {
      if (!(err instanceof Error) || err.name !== "LockTimeoutError") throw err;
      throw new TRPCError({
        code: "SERVICE_UNAVAILABLE",
        message: `the stock locks of ${items.length} product(s) were not all free within ${ctx.config.lockWaitMs} ms; nothing was taken, try again`,
        cause: err,
      });
    });
  try {
    const held = (item: WantedItem) => stockLockOf(all, item.productId);
    const stock = await Promise.all(items.map((item) => readStock(ctx, item.productId, held(item))));
    items.forEach((item, i) => {
      const qty = stock[i]!;
      if (qty < item.quantity) {
        throw new TRPCError({
          code: "PRECONDITION_FAILED",
          message: `product ${item.productId} has ${qty} left, the order asks ${item.quantity}: nothing was taken`,
        });
      }
    });
    await sleep(opts.workMs, AbortSignal.any([all.signal, opts.signal]));
    return await deductAll(
      ctx,
      all,
      items.map((item) => ({ ...item, lock: held(item) })),
    );
  } finally {
    await all.release().catch((err: unknown) => ctx.logger.warn({ err }, "order stock locks release failed"));
  }
}

/** The stock lock of `productId` among the products' locks taken together. */
export function stockLockOf(all: MultiLockHandle, productId: string): LockHandle {
  return all.handles[all.resources.indexOf(stockResource(productId))]!;
}

/** The stock under `lock`, read fenced: it registers the lock's token on the stock (the library's fencedRead). */
async function readStock(ctx: Context, productId: string, lock: LockHandle): Promise<number> {
  const keys = { key: lock.key, fence: fenceKey(lock.resource), owner: lock.owner };
  const read = (await fencedRead(stockKey(productId), ["qty"])(ctx.redis, keys)) as FencedReadResult;
  if (read.state !== "held") throw lost(productId);
  return read.values[0] == null ? 0 : Number(read.values[0]);
}

/**
 * One fenced write per product, each with its own lock's token. A write refused (stale: that lock was lost)
 * or failed gives back the writes that went through, so the order takes all or nothing.
 */
async function deductAll(
  ctx: Context,
  all: MultiLockHandle,
  items: readonly (WantedItem & { lock: LockHandle })[],
): Promise<OrderItem[]> {
  if (!all.isHeld()) throw lost(items.find((i) => !i.lock.isHeld())?.productId ?? "?");
  const write = (i: (typeof items)[number], sign: number) =>
    fencedWrite(ctx.redis, stockKey(i.productId), i.lock.token ?? 0, sign * i.quantity);
  const results = await Promise.allSettled(items.map((i) => write(i, -1)));
  const ok = (n: number) => {
    const r = results[n];
    return r?.status === "fulfilled" && r.value.ok;
  };
  const failed = items.findIndex((_, n) => !ok(n));
  if (failed >= 0) {
    await Promise.allSettled(items.filter((_, n) => ok(n)).map((i) => write(i, +1)));
    const r = results[failed]!;
    throw r.status === "rejected" ? orderWriteFailure(r.reason) : lost(items[failed]!.productId);
  }
  return items.map((i) => ({ productId: i.productId, quantity: i.quantity, token: i.lock.token }));
}

/**
 * A write whose reply was lost may have been applied, and no order was recorded: "try again" would take the
 * stock twice, so the answer says to look first (as stock.deduct's does).
 */
function orderWriteFailure(error: unknown): unknown {
  const failure = writeFailure(error);
  if (failure === error) return error;
  return new TRPCError({
    code: "SERVICE_UNAVAILABLE",
    message:
      "Redis went away while the order's stock writes were in flight, so some may have been applied and no order was recorded: read stock.get for its products before you retry",
    cause: error,
  });
}

const lost = (productId: string) =>
  new TRPCError({
    code: "SERVICE_UNAVAILABLE",
    message: `the stock lock of product ${productId} was lost before the order was written: nothing was taken, try again`,
  });
