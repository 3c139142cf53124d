import type { Cluster, Redis } from "ioredis";
import { type KeyOfLock, lockGlob, lockOfKey, queueKey, tokenKey } from "./keys.js";
import { parseMutex, parseShared, type RawLock, timeMs } from "./parse.js";

export type { RawLock } from "./parse.js";
export type RedisClient = Redis | Cluster;

export const isClusterClient = (c: RedisClient): c is Cluster =>
  (c as { isCluster?: boolean }).isCluster === true;

/** The masters to scan and to watch: the client itself, or every master of a Cluster. */
export function masters(client: RedisClient): Redis[] {
  return isClusterClient(client) ? client.nodes("master") : [client];
}

type Item = KeyOfLock & { key: string };
/** One reply per command: an error, or the value. */
type Reply = [Error | null, unknown];

/**
 * What is read per lock: a mutex's hash, PTTL, token (its fence counter) and the length of its waiter queue;
 * a semaphore's or read-write lock's hash and PTTL (each holder's token is in the hash, and there is no queue).
 */
function commands(item: Item): [string, string][] {
  const { key, kind, resource } = item;
  const own: [string, string][] = [
    ["hgetall", key],
    ["pttl", key],
  ];
  return kind === "mutex" ? [...own, ["get", tokenKey(resource)], ["llen", queueKey(key)]] : own;
}

/** A key of another type than a lock's (someone else's key under `lock:`) is not a lock, not a failure. */
const notALock = (err: Error | null) => err !== null && /^WRONGTYPE/.test(err.message);

function parse(item: Item, replies: Reply[], redisNowMs: number): RawLock | null {
  const failed = replies.find(([err]) => err !== null)?.[0];
  if (failed) {
    if (notALock(failed)) return null;
    throw failed;
  }
  const [hash, pttl, fence, queued] = replies.map(([, v]) => v);
  const at = { key: item.key, resource: item.resource, readAt: Date.now() };
  return item.kind === "mutex"
    ? parseMutex(at, hash, pttl, fence, queued)
    : parseShared(item.kind, at, hash, pttl, redisNowMs);
}

const settle = (p: Promise<unknown>): Promise<Reply> =>
  p.then(
    (v): Reply => [null, v],
    (e: unknown): Reply => [e instanceof Error ? e : new Error(String(e)), null],
  );

/**
 * Reads lock keys of every kind, in one pipeline on a single Redis (with one TIME when a semaphore or
 * read-write lock is among them: their holders' leases are Redis times), one command each on a Cluster (a
 * pipeline there must stay in one slot). A key that is gone, holds no live holder or is not a hash maps to
 * null; a key that is not a lock key (a fence counter, a queue) is left out. Rejects when Redis cannot be
 * reached.
 */
export async function readLocks(
  client: RedisClient,
  prefix: string,
  keys: readonly string[],
): Promise<Map<string, RawLock | null>> {
  const out = new Map<string, RawLock | null>();
  const items = keys.flatMap((key): Item[] => {
    const lock = lockOfKey(prefix, key);
    return lock === null ? [] : [{ key, ...lock }];
  });
  if (items.length === 0) return out;
  const needsTime = items.some((i) => i.kind !== "mutex");
  if (isClusterClient(client)) {
    const now = needsTime ? timeMs(await client.time()) : 0;
    await Promise.all(
      items.map(async (item) => {
        const replies = await Promise.all(
          commands(item).map(([cmd, key]) => settle(client.call(cmd, key) as Promise<unknown>)),
        );
        out.set(item.key, parse(item, replies, now));
      }),
    );
    return out;
  }
  const p = client.pipeline();
  if (needsTime) p.time();
  for (const item of items) for (const [cmd, key] of commands(item)) p.call(cmd, key);
  const replies: Reply[] = ((await p.exec()) ?? []) as Reply[];
  let i = 0;
  let now = 0;
  if (needsTime) {
    const [err, time] = replies[i++] ?? [new Error("no reply to TIME"), null];
    if (err) throw err;
    now = timeMs(time);
  }
  for (const item of items) {
    const n = commands(item).length;
    out.set(item.key, parse(item, replies.slice(i, i + n), now));
    i += n;
  }
  return out;
}

/**
 * Every lock key of every kind under `prefix` whose resource starts with `resourcePrefix`, with one SCAN pass
 * per master (never KEYS), reading each page as it comes. The walk costs O(keyspace): the observer does it
 * on start and on a periodic resync only, never per update.
 */
export async function scanLocks(
  client: RedisClient,
  prefix: string,
  resourcePrefix = "",
  count = 1_000,
): Promise<RawLock[]> {
  const out: RawLock[] = [];
  const pattern = lockGlob(prefix, resourcePrefix);
  for (const node of masters(client)) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", count);
      cursor = next;
      // Read through the node that answered the SCAN: on a Cluster its keys live there.
      const read = await readLocks(isClusterClient(client) ? client : node, prefix, keys);
      for (const lock of read.values()) if (lock?.resource.startsWith(resourcePrefix)) out.push(lock);
    } while (cursor !== "0");
  }
  return out;
}
