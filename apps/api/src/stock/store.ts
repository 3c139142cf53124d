import type { Redis } from "ioredis";
import type { Stock } from "../types.js";
import { stockKey } from "./keys.js";
import { stockWrite } from "./write-outcome.js";

export async function readStock(redis: Redis, productId: string): Promise<Stock> {
  const [qty, fence] = await redis.hmget(stockKey(productId), "qty", "fence");
  return {
    productId,
    qty: qty === null ? 0 : Number(qty),
    fence: fence === null ? 0 : Number(fence),
    exists: qty !== null,
  };
}

/**
 * Sets the quantity. The fence is kept: lowering it would let an old token write again. A timeout or lost
 * reply, on the write or on the read after it, may follow a write that ran: the answer says to look first.
 */
export async function resetStock(redis: Redis, productId: string, qty: number): Promise<Stock> {
  return stockWrite(redis.hset(stockKey(productId), "qty", qty).then(() => readStock(redis, productId)));
}

export async function readQty(redis: Redis, productId: string): Promise<number> {
  const qty = await redis.hget(stockKey(productId), "qty");
  return qty === null ? 0 : Number(qty);
}

/** The unsafe write of the `none`/`local`/`redlock` modes: a blind decrement after a separate check. */
export async function decrementQty(redis: Redis, productId: string, quantity: number): Promise<number> {
  return redis.hincrby(stockKey(productId), "qty", -quantity);
}
