import { TRPCError } from "@trpc/server";
import type { Redis } from "ioredis";
import { stockKey } from "./keys.js";

/** A product seen to exist is trusted for this long, so the check costs one EXISTS per product per period. */
const KNOWN_FOR_MS = 5_000;
/** Bounded: an attacker cycling product ids only evicts entries. */
const MAX_ENTRIES = 10_000;

const known = new WeakMap<Redis, Map<string, number>>();

/**
 * Deducts only run on products that exist (created by stock.reset or a demo burst): an unknown id would
 * otherwise take a lock, and leave keys, per id a client invents.
 */
export async function assertKnownProduct(redis: Redis, productId: string): Promise<void> {
  let seen = known.get(redis);
  if (!seen) {
    seen = new Map();
    known.set(redis, seen);
  }
  const until = seen.get(productId);
  if (until !== undefined && until > performance.now()) return;
  if ((await redis.exists(stockKey(productId))) === 0) {
    seen.delete(productId);
    throw new TRPCError({ code: "NOT_FOUND", message: `no product ${productId} (stock.reset creates one)` });
  }
  if (seen.size >= MAX_ENTRIES) seen.delete(seen.keys().next().value as string);
  seen.set(productId, performance.now() + KNOWN_FOR_MS);
}
