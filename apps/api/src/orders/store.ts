import type { Redis } from "ioredis";
import type { Order } from "../types.js";

export const orderKey = (orderId: string) => `order:{${orderId}}`;
/** A sorted set of order ids by creation time, so listing never scans the keyspace. */
export const ORDER_INDEX = "orders:index";

export async function readOrder(redis: Redis, orderId: string): Promise<Order | null> {
  const h = await redis.hgetall(orderKey(orderId));
  if (!h.orderId) return null;
  return {
    orderId: h.orderId,
    productId: h.productId ?? "",
    quantity: Number(h.quantity),
    status: "created",
    createdAt: Number(h.createdAt),
    instanceId: h.instanceId ?? "",
    token: h.token ? Number(h.token) : null,
  };
}

export async function storeOrder(redis: Redis, order: Order): Promise<void> {
  await redis
    .multi()
    .hset(orderKey(order.orderId), {
      orderId: order.orderId,
      productId: order.productId,
      quantity: order.quantity,
      status: order.status,
      createdAt: order.createdAt,
      instanceId: order.instanceId,
      token: order.token ?? "",
    })
    .zadd(ORDER_INDEX, String(order.createdAt), order.orderId)
    .exec();
}

export async function listOrders(redis: Redis, limit: number): Promise<Order[]> {
  const ids = await redis.zrevrange(ORDER_INDEX, 0, limit - 1);
  const orders = await Promise.all(ids.map((id) => readOrder(redis, id)));
  return orders.filter((o): o is Order => o !== null);
}

/** Keeps the newest `keep` orders; returns how many were removed. Used by the cleanup job. */
export async function trimOrders(redis: Redis, keep: number): Promise<number> {
  const old = await redis.zrange(ORDER_INDEX, "0", String(-keep - 1));
  if (old.length === 0) return 0;
  await redis
    .multi()
    .del(...old.map(orderKey))
    .zrem(ORDER_INDEX, ...old)
    .exec();
  return old.length;
}
