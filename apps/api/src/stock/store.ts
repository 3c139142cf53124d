import type { Redis } from "ioredis";
import type { Stock } from "../types.js";
import { stockKey } from "./keys.js";

export async function readStock(redis: Redis, productId: string): Promise<Stock> {
  const [qty, fence] = await redis.hmget(stockKey(productId), "qty", "fence");
  return {
    productId,
    qty: qty === null ? 0 : Number(qty),
    fence: fence === null ? 0 : Number(fence),
    exists: qty !== null,
  };
}

/** Sets the quantity. The fence is kept: lowering it would let an old token write again. */
export async function resetStock(redis: Redis, productId: string, qty: number): Promise<Stock> {
  await redis.hset(stockKey(productId), "qty", qty);
  return readStock(redis, productId);
}

export async function readQty(redis: Redis, productId: string): Promise<number> {
  const qty = await redis.hget(stockKey(productId), "qty");
  return qty === null ? 0 : Number(qty);
}

/** The unsafe write of the `none`/`local`/`redlock` modes: a blind decrement after a separate check. */
export async function decrementQty(redis: Redis, productId: string, quantity: number): Promise<number> {
  return redis.hincrby(stockKey(productId), "qty", -quantity);
}
