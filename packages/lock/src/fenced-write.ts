import type { ChainableCommander } from "ioredis";
import { InvalidOptionError } from "./errors.js";
import { fencedWrite as fencedWriteScript } from "./scripts/fenced-write.js";
import { type RedisClient, type ScriptCommands, withScripts } from "./scripts/index.js";

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

/**
 * Queues the same guarded write on an ioredis pipeline, e.g. to send it with `handle.releaseWith(pipeline)`
 * in one round trip. Read its answer with `fencedWriteReply(replies[i])`.
 */
export function queueFencedWrite(
  pipeline: ChainableCommander,
  key: string,
  token: number,
  delta: number,
): void {
  checkArgs(key, token, delta);
  const p = pipeline as ChainableCommander & Partial<Pick<ScriptCommands, "lockyardFencedWrite">>;
  // A pipeline made before the scripts were defined on its client lacks the command: send the script itself.
  if (typeof p.lockyardFencedWrite === "function") p.lockyardFencedWrite(key, token, delta);
  else pipeline.eval(fencedWriteScript.lua, 1, key, token, delta);
}

/** The answer of a queued fencedWrite (one entry of pipeline replies); throws the command's error. */
export function fencedWriteReply(entry: [Error | null, unknown] | undefined): FencedWriteResult {
  if (!entry) throw new InvalidOptionError("entry", entry, "a pipeline reply");
  if (entry[0]) throw entry[0];
  const [ok, value] = entry[1] as [number, number];
  return ok === 1 ? { ok: true, qty: value } : { ok: false, reason: "STALE", fence: value };
}

function checkArgs(key: string, token: number, delta: number): void {
  if (typeof key !== "string" || key.length === 0)
    throw new InvalidOptionError("key", key, "a non-empty string");
  if (!Number.isSafeInteger(token) || token < 0)
    throw new InvalidOptionError("token", token, "a fencing token");
  if (!Number.isSafeInteger(delta)) throw new InvalidOptionError("delta", delta, "an integer");
}
