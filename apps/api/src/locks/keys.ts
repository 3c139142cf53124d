import { fenceKey, queueKeyOf } from "@lockyard/lock";

/** The API's lock prefix: `createLocks` without a `prefix` option. */
export const LOCK_PREFIX = "lock:";

/** Fields the library keeps in a lock hash beside its owners (a waiters mark, a handoff not yet adopted). */
export const MARK_FIELDS = new Set(["~waiters", "~handed"]);

const ENCODED: Record<string, string> = { "%25": "%", "%7B": "{", "%7D": "}" };

/**
 * The resource of a lock key `<prefix>{<resource>}`, or null for any other key (a queue or fence key of the same
 * lock, an unrelated key). Braces and `%` inside a resource are written `%7B`, `%7D` and `%25` in keys.
 */
export function resourceOfKey(prefix: string, key: string): string | null {
  if (!key.startsWith(`${prefix}{`) || !key.endsWith("}")) return null;
  const inner = key.slice(prefix.length + 1, -1);
  if (inner.length === 0 || inner.includes("{") || inner.includes("}")) return null;
  return inner.replace(/%(25|7B|7D)/gi, (m) => ENCODED[m.toUpperCase()] ?? m);
}

/** The fencing counter of a resource, as the library names it. */
export const tokenKey = (resource: string): string => fenceKey(resource);
/** The library's queue of waiting processes for the lock whose hash is `key` (one entry per process). */
export const queueKey = (key: string): string => queueKeyOf(key);

/** A SCAN MATCH / PSUBSCRIBE glob for `prefix` followed by anything: glob characters in it are escaped. */
export function globPrefix(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
}
