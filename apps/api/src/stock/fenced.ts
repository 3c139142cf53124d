import { fencedWrite } from "@lockyard/lock";
import type { Redis } from "ioredis";
import { stockKey } from "./keys.js";

export type FencedResult = { ok: true; qty: number } | { ok: false; fence: number };

/** Applies delta only if `token` is not older than the highest token already written (DESIGN §3). */
export async function fencedStockWrite(
  redis: Redis,
  productId: string,
  token: number,
  delta: number,
): Promise<FencedResult> {
  const r = await fencedWrite(redis, stockKey(productId), token, delta);
  return r.ok ? r : { ok: false, fence: r.fence };
}
