import { InvalidOptionError } from "./errors.js";
import { type RedisClient, withScripts } from "./scripts/index.js";

export type FencedWriteResult = { ok: true; qty: number } | { ok: false; reason: "STALE"; fence: number };

/**
 * Applies `delta` to the `qty` field of a hash (e.g. `stock:{<productId>}`) only if `token` is not below
 * the highest token written so far (its `fence` field), which it then raises. A holder that paused past
 * its lease and comes back with an old token writes nothing.
 */
export async function fencedWrite(
  redis: RedisClient,
  key: string,
  token: number,
  delta: number,
): Promise<FencedWriteResult> {
  checkArgs(key, token, delta);
  const [ok, value] = await withScripts(redis).lockyardFencedWrite(key, token, delta);
  return ok === 1 ? { ok: true, qty: value } : { ok: false, reason: "STALE", fence: value };
}

function checkArgs(key: string, token: number, delta: number): void {
  if (typeof key !== "string" || key.length === 0)
    throw new InvalidOptionError("key", key, "a non-empty string");
  if (!Number.isSafeInteger(token) || token < 0)
    throw new InvalidOptionError("token", token, "a fencing token");
  if (!Number.isSafeInteger(delta)) throw new InvalidOptionError("delta", delta, "an integer");
}
