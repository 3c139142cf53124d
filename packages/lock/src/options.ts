import { InvalidOptionError } from "./errors.js";
import { isText } from "./resource.js";

/** setTimeout's ceiling; anything above it would fire at once, so longer leases and waits are refused. */
export const MAX_MS = 2_147_483_647;

/**
 * The shortest lease, for the whole Locks and per call alike: a Redlock's validity margin is at least 2 ms, so a
 * 1 or 2 ms lease could never be valid (it read as contention, or as a quorum not reached).
 */
export const MIN_LEASE_MS = 3;

export function checkMs(option: string, value: unknown, min: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > MAX_MS) {
    throw new InvalidOptionError(option, value, `an integer number of ms in [${min}, ${MAX_MS}]`);
  }
  return value;
}

/** A whole count (of items, replicas, locks) in [min, MAX_MS]. */
export function checkCount(option: string, value: unknown, min: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > MAX_MS) {
    throw new InvalidOptionError(option, value, `an integer in [${min}, ${MAX_MS}]`);
  }
  return value;
}

/** Marks a lock hash whose holder must PUBLISH on release. Never a valid owner id. */
export const WAITERS_FIELD = "~waiters";
/** Names the owner a handoff granted the lock to, until it adopts it (redis/scripts/queue.ts). Never an owner id. */
export const HANDED_FIELD = "~handed";

/** A refused writer blocks new readers until then (redis/scripts/shared-body.ts). Never an owner id. */
export const WRITER_WAITS_FIELD = "~writer-waits";
/** The writer that set WRITER_WAITS_FIELD last (redis/scripts/shared-body.ts). Never an owner id. */
export const WRITER_BY_FIELD = "~writer-by";
/** A semaphore's permit count (redis/scripts/shared-body.ts). Never an owner id. */
export const PERMITS_FIELD = "~permits";
const MARKS = new Set([WAITERS_FIELD, HANDED_FIELD, WRITER_WAITS_FIELD, WRITER_BY_FIELD, PERMITS_FIELD]);

/** Fields of a lock hash that are not owners. */
export const isMarkField = (field: string): boolean => MARKS.has(field);

export function checkOwner(value: unknown): string {
  // No control character or lone surrogate: two owners with a lone surrogate each are stored as the same
  // UTF-8 name (U+FFFD), and one would re-enter the other's hold.
  if (typeof value !== "string" || value.length > 256 || !isText(value, 1024) || isMarkField(value)) {
    throw new InvalidOptionError(
      "owner",
      value,
      `a string of 1-256 characters, no control characters or lone surrogates, other than ${[...MARKS].map((m) => `"${m}"`).join(", ")}`,
    );
  }
  return value;
}

export function checkString(option: string, value: unknown, pattern: RegExp, expected: string): string {
  if (typeof value !== "string" || !pattern.test(value))
    throw new InvalidOptionError(option, value, expected);
  return value;
}

export function checkSignal(value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) throw new InvalidOptionError("signal", value, "an AbortSignal");
  return value;
}

/**
 * ioredis `keyPrefix` is refused: SCAN MATCH and the subscriber's channels do not get it, so `list()` would
 * miss every lock and waiters would not hear releases. The `prefix` option covers every key and channel.
 */
export function checkNoKeyPrefix(option: string, client: unknown): void {
  const o = (client as { options?: { keyPrefix?: unknown; redisOptions?: { keyPrefix?: unknown } } }).options;
  const keyPrefix = o?.keyPrefix || o?.redisOptions?.keyPrefix;
  if (keyPrefix) {
    throw new InvalidOptionError(
      `${option}.options.keyPrefix`,
      String(keyPrefix),
      'unset: ioredis keyPrefix is not supported; use the Lockyard `prefix` option (e.g. prefix: "app1:")',
    );
  }
}

/**
 * Refuses an option nobody reads (set to anything but undefined): a misspelt `leaseMS` would otherwise leave the
 * default in force without a word. `where` prefixes nested names ("retry.").
 */
export function checkKnownKeys(value: object, known: ReadonlySet<string>, where = ""): void {
  for (const key in value) {
    if (known.has(key) || (value as Record<string, unknown>)[key] === undefined) continue;
    const near = [...known].find((k) => k.toLowerCase() === key.toLowerCase());
    const expected = near ? `"${near}"?` : `one of ${[...known].join(", ")}`;
    throw new InvalidOptionError(
      `${where}${key}`,
      (value as Record<string, unknown>)[key],
      `no such option; ${expected}`,
    );
  }
}

const LIST_KEYS: ReadonlySet<string> = new Set(["match", "count", "limit", "kind"]);

/** list()'s options: an object of known names (a misspelt `knd` listed mutexes, `mtch` everything). */
export function checkListOptions(opts: unknown): void {
  if (opts === undefined) return;
  if (typeof opts !== "object" || opts === null) {
    throw new InvalidOptionError("options", opts, 'an object, e.g. { match: "stock:*" }');
  }
  checkKnownKeys(opts, LIST_KEYS);
}
