import type { LockKeys } from "../core/backend.js";
import { namedInStore } from "../core/early.js";
import { InvalidOptionError } from "../errors.js";
import { checkKnownKeys } from "../options.js";
import type { ReadsFn } from "../types.js";
import { type RedisClient, withScripts } from "./scripts/index.js";

export type FencedWriteResult =
  | { ok: true; qty: number }
  | { ok: false; reason: "STALE"; fence: number }
  | { ok: false; reason: "INSUFFICIENT"; qty: number };

/** Which fields of the guarded hash hold the value and the highest token seen. */
export interface FencedFields {
  /** Default `qty`. */
  value?: string;
  /** Default `fence`. */
  fence?: string;
}

/**
 * Applies `delta` to a value field of a hash (e.g. `stock:{<productId>}`'s `qty`) only if `token` is not
 * below the highest token the hash has seen (its fence field, raised by writes and by fencedRead), and only
 * if the result is not below zero. A holder that paused past its lease and comes back with an old token
 * writes nothing (STALE); no interleaving can take the value below zero (INSUFFICIENT).
 */
export async function fencedWrite(
  redis: RedisClient,
  key: string,
  token: number,
  delta: number,
  fields: FencedFields = {},
): Promise<FencedWriteResult> {
  checkKey(key);
  if (!Number.isSafeInteger(token) || token < 0)
    throw new InvalidOptionError("token", token, "a fencing token");
  if (!Number.isSafeInteger(delta)) throw new InvalidOptionError("delta", delta, "an integer");
  const { value, fence } = fieldNames(fields, WRITE_FIELDS);
  const [ok, n] = await withScripts(redis).lockyardFencedWrite(key, token, delta, value, fence);
  if (ok === 1) return { ok: true, qty: n };
  if (ok === 0) return { ok: false, reason: "STALE", fence: n };
  return { ok: false, reason: "INSUFFICIENT", qty: n };
}

export type FencedReadResult =
  /** Read under the lock; the token is registered, so older holders' writes are now STALE. */
  | { state: "held"; values: (string | null)[] }
  /** This attempt did not get the lock; the values are what Redis had then. */
  | { state: "not-holder"; values: (string | null)[] }
  /** The hash has seen a newer token: this holder's lock was lost. */
  | { state: "stale"; values: (string | null)[] };

const STATES = { "1": "held", "0": "not-holder", "-1": "stale" } as const;

/**
 * A `reads` function for acquire: reads `read` fields of the guarded hash right after the attempt and, when
 * the attempt won, registers the new token on the hash (see scripts/fenced-read.ts). Use it for the read of a
 * read → check → fencedWrite sequence; `handle.reads` resolves to a FencedReadResult.
 */
export function fencedRead(
  key: string,
  read: readonly string[],
  fields: Pick<FencedFields, "fence"> = {},
): ReadsFn {
  checkKey(key);
  if (!Array.isArray(read) || !read.every((f) => typeof f === "string" && f.length > 0))
    throw new InvalidOptionError("read", read, 'an array of field names, e.g. ["qty"]');
  const { fence } = fieldNames(fields, READ_FIELDS);
  return async (redis: RedisClient, lock: LockKeys): Promise<FencedReadResult> => {
    // A hold granted early is named in Redis once the release that grants it runs: read after that.
    await namedInStore(lock.key, lock.owner);
    const [state, ...values] = await withScripts(redis).lockyardFencedRead(
      lock.key,
      lock.fence,
      key,
      lock.owner,
      fence,
      ...read,
    );
    return { state: STATES[String(state) as keyof typeof STATES], values: values as (string | null)[] };
  };
}

const WRITE_FIELDS: ReadonlySet<string> = new Set(["value", "fence"]);
const READ_FIELDS: ReadonlySet<string> = new Set(["fence"]);

function fieldNames(f: FencedFields, known: ReadonlySet<string>): { value: string; fence: string } {
  if (typeof f !== "object" || f === null) throw new InvalidOptionError("fields", f, "an object");
  checkKnownKeys(f, known, "fields.");
  const value = f.value ?? "qty";
  const fence = f.fence ?? "fence";
  for (const [name, v] of [
    ["fields.value", value],
    ["fields.fence", fence],
  ] as const) {
    if (typeof v !== "string" || v.length === 0)
      throw new InvalidOptionError(name, v, "a non-empty field name");
  }
  if (value === fence) throw new InvalidOptionError("fields.fence", fence, "a field other than fields.value");
  return { value, fence };
}

function checkKey(key: string): void {
  if (typeof key !== "string" || key.length === 0)
    throw new InvalidOptionError("key", key, "a non-empty string");
}
