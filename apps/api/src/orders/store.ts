import type { Redis } from "ioredis";
import { defineScripts } from "../lib/scripts.js";
import type { Order, OrderItem } from "../types.js";

export const orderKey = (orderId: string) => `order:{${orderId}}`;
/** A sorted set of order ids by creation time, so listing never scans the keyspace. */
export const ORDER_INDEX = "orders:index";

export async function readOrder(redis: Redis, orderId: string): Promise<Order | null> {
  const h = await redis.hgetall(orderKey(orderId));
  if (!h.orderId) return null;
  const productId = h.productId ?? "";
  const quantity = Number(h.quantity);
  return {
    orderId: h.orderId,
    productId,
    quantity,
    status: "created",
    createdAt: Number(h.createdAt),
    instanceId: h.instanceId ?? "",
    token: h.token ? Number(h.token) : null,
    // Records written before orders had items hold one product.
    items: h.items ? (JSON.parse(h.items) as OrderItem[]) : [{ productId, quantity, token: null }],
    fromStock: h.fromStock === "1",
  };
}

// KEYS[1] the order's hash; ARGV[1] retention (ms); ARGV[2..] field, value, field, value, …
// Returns 1 when the record was written (with its TTL), 0 when the order existed already (nothing written).
const createLua = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;

const scripts = defineScripts<{
  lockyardOrderCreate(key: string, retentionMs: number, ...fieldsAndValues: string[]): Promise<number>;
}>({ name: "lockyardOrderCreate", numberOfKeys: 1, lua: createLua });

/**
 * Creates an order, which is also its idempotency record: it lives `retentionMs` (ORDER_RETENTION_HOURS, at
 * least 24 h), whatever the traffic, and a resubmission inside that window replays it. Only if absent: when
 * the order exists already, nothing is written and the existing order is returned.
 */
export async function createOrder(
  redis: Redis,
  order: Order,
  retentionMs: number,
): Promise<"created" | Order> {
  const record = {
    orderId: order.orderId,
    productId: order.productId,
    quantity: String(order.quantity),
    status: order.status,
    createdAt: String(order.createdAt),
    instanceId: order.instanceId,
    token: String(order.token ?? ""),
    items: JSON.stringify(order.items),
    fromStock: order.fromStock ? "1" : "0",
  };
  // Two writes, not one: on a Cluster the record (its own slot) and the index (another) cannot share one
  // script. The record goes first, and listing skips ids whose record is gone, so the index never shows a
  // missing order.
  const created = await scripts(redis).lockyardOrderCreate(
    orderKey(order.orderId),
    retentionMs,
    ...Object.entries(record).flat(),
  );
  if (created !== 1) {
    const existing = await readOrder(redis, order.orderId);
    // Gone between the two reads (it expired): the order is not there to replay; write this one.
    return existing ?? createOrder(redis, order, retentionMs);
  }
  await redis
    .multi()
    .zadd(ORDER_INDEX, String(order.createdAt), order.orderId)
    .pexpire(ORDER_INDEX, retentionMs)
    .exec();
  return "created";
}

export async function listOrders(redis: Redis, limit: number): Promise<Order[]> {
  const ids = await redis.zrevrange(ORDER_INDEX, 0, limit - 1);
  const orders = await Promise.all(ids.map((id) => readOrder(redis, id)));
  return orders.filter((o): o is Order => o !== null);
}

/**
 * Drops index entries of orders older than the retention window; returns how many. Used by the cleanup job.
 * Never by count: a record inside the window stays, however many orders came after it. The records
 * themselves expire by their TTL.
 */
export async function expireOrders(redis: Redis, retentionMs: number, now = Date.now()): Promise<number> {
  return redis.zremrangebyscore(ORDER_INDEX, "-inf", `(${now - retentionMs}`);
}
