import { InvalidOptionError, InvalidResourceError } from "./errors.js";

/*
 * Resource names and the keys they map to (DESIGN §2).
 *
 * A name is any string of 1-512 UTF-8 bytes without control characters (U+0000-U+001F, U+007F) and without
 * lone UTF-16 surrogates (which have no UTF-8 form: two such names would share one key).
 *
 * In keys a name is written with `%` → `%25`, `{` → `%7B`, `}` → `%7D` and nothing else changed, so the
 * encoded name `e` never holds a brace and is the hash tag of every key of the lock: one Cluster slot.
 *
 * With N = "" for the default prefix "lock:" and N = prefix for any other prefix:
 *
 *   lock hash        <prefix>{e}           lock:{e}            app1:{e}
 *   fence counter    <N>fence:{e}          fence:{e}           app1:fence:{e}
 *   release channel  <N>lock-released:{e}  lock-released:{e}   app1:lock-released:{e}
 *   waiter queue     <N>queue:{e}          queue:{e}           app1:queue:{e}
 *   entry leases     <N>queue-leases:{e}   queue-leases:{e}    app1:queue-leases:{e}
 *
 * So the default layout is exactly DESIGN §2's, and every key and channel of a custom prefix starts with it
 * (one ACL pattern `~app1:* &app1:*` covers it). Prefixes are 1-64 characters of [A-Za-z0-9:_.-] (no
 * brace, no glob character) and never end in a suffix of ours such as `fence:`: with prefix `x:fence:` the
 * lock hash `x:fence:{e}` would be the fence counter of prefix `x:` (and `fence:` that of the default).
 * Under those rules no two prefixes share a key or a channel, and no lock hash is another key of ours.
 * New per-lock keys (a waiter queue) take a suffix of their own here, added to KEY_SUFFIXES.
 */

export const DEFAULT_PREFIX = "lock:";
const FENCE = "fence:";
const RELEASED = "lock-released:";
const QUEUE = "queue:";
const QUEUE_LEASES = "queue-leases:";
/** Suffixes of our keys besides the lock hash: a prefix ending in one could collide with them. */
// `semaphore:` and `rw:` are the kinds' own prefixes (redis/redis-locks.ts): `a:` semaphores live under `a:semaphore:`.
const KEY_SUFFIXES = [FENCE, QUEUE, QUEUE_LEASES, "semaphore:", "rw:"];
const PREFIX = /^[A-Za-z0-9:_.-]{1,64}$/;

export function isValidResource(resource: unknown): resource is string {
  return typeof resource === "string" && isText(resource, 512);
}

/** 1 to maxBytes UTF-8 bytes, no control character (U+0000-U+001F, U+007F), no lone surrogate: one pass. */
export function isText(s: string, maxBytes: number): boolean {
  const n = s.length;
  if (n === 0 || n > maxBytes) return false;
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c < 0x20 || c === 0x7f) return false;
      bytes++;
    } else if (c < 0x800) bytes += 2;
    else if (c < 0xd800 || c > 0xdfff) bytes += 3;
    else {
      const d = s.charCodeAt(i + 1);
      if (c > 0xdbff || !(d >= 0xdc00 && d <= 0xdfff)) return false;
      bytes += 4;
      i++;
    }
  }
  return bytes <= maxBytes;
}

export function assertResource(resource: unknown): asserts resource is string {
  if (!isValidResource(resource)) throw new InvalidResourceError(resource);
}

/** Validates the `prefix` option (see the table above). */
export function checkPrefix(value: unknown): string {
  const expected =
    "1-64 characters of [A-Za-z0-9:_.-], not ending in fence:, queue:, queue-leases:, semaphore: or rw:";
  if (typeof value !== "string" || !PREFIX.test(value))
    throw new InvalidOptionError("prefix", value, expected);
  for (const s of KEY_SUFFIXES)
    if (value.endsWith(s)) throw new InvalidOptionError("prefix", value, expected);
  return value;
}

const SPECIAL = /[%{}]/;
const SPECIALS = /[%{}]/g;
const ENCODED = { "%": "%25", "{": "%7B", "}": "%7D" } as Record<string, string>;
const DECODED = { "%25": "%", "%7B": "{", "%7D": "}" } as Record<string, string>;

/** The name as written in keys: `%`, `{`, `}` become `%25`, `%7B`, `%7D`. */
export function encodeResource(resource: string): string {
  return SPECIAL.test(resource) ? resource.replace(SPECIALS, (c) => ENCODED[c]!) : resource;
}

/** The inverse of encodeResource, or null for text it never writes (a brace, a stray `%`, a bad name). */
export function decodeResource(encoded: string): string | null {
  if (!SPECIAL.test(encoded)) return isValidResource(encoded) ? encoded : null;
  let bad = false;
  const name = encoded.replace(/%7B|%7D|%25|[%{}]/g, (m) => {
    const d = DECODED[m];
    if (d === undefined) bad = true;
    return d ?? m;
  });
  return !bad && isValidResource(name) ? name : null;
}

/** What precedes the fence and channel suffixes: "" for the default prefix, else the prefix. */
const ns = (prefix: string): string => (prefix === DEFAULT_PREFIX ? "" : prefix);

/** `<prefix>{<encoded resource>}`: the lock hash. */
export const lockKey = (prefix: string, resource: string): string => `${prefix}{${encodeResource(resource)}}`;
/** The fencing counter of a resource: `fence:{r}` under the default prefix, `<prefix>fence:{r}` otherwise. */
export const fenceKey = (resource: string, prefix: string = DEFAULT_PREFIX): string =>
  `${ns(prefix)}${FENCE}{${encodeResource(resource)}}`;
/** The release channel: `lock-released:{r}` under the default prefix, `<prefix>lock-released:{r}` otherwise. */
export const releaseChannel = (resource: string, prefix: string = DEFAULT_PREFIX): string =>
  `${ns(prefix)}${RELEASED}{${encodeResource(resource)}}`;
/** Where a handoff to a waiter of the process `instanceId` is announced: `<release channel>:<instanceId>`. */
export const handoffChannel = (releaseChannelName: string, instanceId: string): string =>
  `${releaseChannelName}:${instanceId}`;

// The same, from a lock key (what the backends are given): its prefix is everything before the first `{`.
const split = (key: string): [string, string] => {
  const i = key.indexOf("{");
  return [ns(key.slice(0, i)), key.slice(i)];
};
/** The fence counter of the lock whose hash is `key`. */
export function fenceKeyOf(key: string): string {
  const [n, tag] = split(key);
  return `${n}${FENCE}${tag}`;
}
/** The waiter queue (queue.ts) of the lock whose hash is `key`. */
export function queueKeyOf(key: string): string {
  const [n, tag] = split(key);
  return `${n}${QUEUE}${tag}`;
}
/** The queue entries' leases of the lock whose hash is `key`. */
export function queueLeasesKeyOf(key: string): string {
  const [n, tag] = split(key);
  return `${n}${QUEUE_LEASES}${tag}`;
}
/** The release channel of the lock whose hash is `key`. */
export function releaseChannelOf(key: string): string {
  const [n, tag] = split(key);
  return `${n}${RELEASED}${tag}`;
}

/** The inverse of lockKey, or null when the key does not have the exact `<prefix>{<encoded resource>}` shape. */
export function resourceOfKey(prefix: string, key: string): string | null {
  return unwrap(`${prefix}{`, key);
}

/** The inverse of releaseChannel, or null for any other channel. */
export function resourceOfChannel(prefix: string, channel: string): string | null {
  return unwrap(`${ns(prefix)}${RELEASED}{`, channel);
}

function unwrap(head: string, s: string): string | null {
  if (!s.startsWith(head) || !s.endsWith("}") || s.length < head.length + 2) return null;
  return decodeResource(s.slice(head.length, -1));
}
