import { fenceKey, queueKeyOf } from "@lockyard/lock";
import type { LockKind } from "../types.js";

/** The API's lock prefix: `createLocks` without a `prefix` option. */
export const LOCK_PREFIX = "lock:";

/** Fields the library keeps in a mutex hash beside its owners (a waiters mark, a handoff not yet adopted). */
export const MARK_FIELDS = new Set(["~waiters", "~handed"]);

/**
 * Where each kind's hash lives under the lock prefix (the library's redis-locks.ts): `lock:{r}`,
 * `lock:semaphore:{r}`, `lock:rw:{r}`. Their fence counters (`lock:semaphore:fence:{r}`…) match `lock:*` too.
 */
const KIND_INFIXES: readonly [string, LockKind][] = [
  ["", "mutex"],
  ["semaphore:", "semaphore"],
  ["rw:", "read-write"],
];

const ENCODED: Record<string, string> = { "%25": "%", "%7B": "{", "%7D": "}" };

export interface KeyOfLock {
  kind: LockKind;
  resource: string;
}

/**
 * The kind and resource of a lock hash `<prefix>[semaphore:|rw:]{<resource>}`, or null for any other key (a
 * fence, queue or unrelated key). Braces and `%` inside a resource are written `%7B`, `%7D` and `%25` in keys.
 */
export function lockOfKey(prefix: string, key: string): KeyOfLock | null {
  if (!key.startsWith(prefix) || !key.endsWith("}")) return null;
  const open = key.indexOf("{", prefix.length);
  if (open < 0) return null;
  const infix = key.slice(prefix.length, open);
  const kind = KIND_INFIXES.find(([i]) => i === infix)?.[1];
  if (kind === undefined) return null;
  const inner = key.slice(open + 1, -1);
  if (inner.length === 0 || inner.includes("{") || inner.includes("}")) return null;
  return { kind, resource: inner.replace(/%(25|7B|7D)/gi, (m) => ENCODED[m.toUpperCase()] ?? m) };
}

/** The fencing counter of a resource, as the library names it. */
export const tokenKey = (resource: string): string => fenceKey(resource);
/** The library's queue of waiting processes for the lock whose hash is `key` (one entry per process). */
export const queueKey = (key: string): string => queueKeyOf(key);

/** A SCAN MATCH / PSUBSCRIBE glob for `prefix` followed by anything: glob characters in it are escaped. */
export function globPrefix(prefix: string): string {
  return `${escapeGlob(prefix)}*`;
}

/**
 * A SCAN MATCH glob for the lock hashes of every kind whose resource starts with `resourcePrefix`:
 * `lock:*{<resourcePrefix>*`. It also matches the kinds' fence counters, which lockOfKey then leaves out.
 */
export function lockGlob(prefix: string, resourcePrefix: string): string {
  return `${escapeGlob(prefix)}*{${escapeGlob(resourcePrefix)}*`;
}

const escapeGlob = (s: string): string => s.replace(/[*?[\]\\]/g, "\\$&");
