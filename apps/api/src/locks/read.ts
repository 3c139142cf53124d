import type { Cluster, Redis } from "ioredis";
import { MARK_FIELDS, queueKey, resourceOfKey, tokenKey } from "./keys.js";

export type RedisClient = Redis | Cluster;

/** One Redis lock as read: owners, TTL, token and how many processes queue for it. */
export interface RawLock {
  key: string;
  resource: string;
  owners: { owner: string; count: number }[];
  /** PTTL as Redis answered it (-1: no TTL). */
  pttlMs: number;
  token: number | null;
  waiters: number;
  /** Date.now() when the reply arrived. */
  readAt: number;
}

export const isClusterClient = (c: RedisClient): c is Cluster =>
  (c as { isCluster?: boolean }).isCluster === true;

/** The masters to scan and to watch: the client itself, or every master of a Cluster. */
export function masters(client: RedisClient): Redis[] {
  return isClusterClient(client) ? client.nodes("master") : [client];
}

type Reply = [Error | null, unknown][];

function parse(
  key: string,
  resource: string,
  hash: unknown,
  pttl: unknown,
  fence: unknown,
  queued: unknown,
): RawLock | null {
  const owners: RawLock["owners"] = [];
  for (const [field, value] of Object.entries((hash ?? {}) as Record<string, string>)) {
    if (!MARK_FIELDS.has(field)) owners.push({ owner: field, count: Number(value) });
  }
  if (owners.length === 0) return null;
  owners.sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0));
  return {
    key,
    resource,
    owners,
    pttlMs: Number(pttl),
    token: fence === null || fence === undefined ? null : Number(fence),
    waiters: Number(queued ?? 0),
    readAt: Date.now(),
  };
}

/**
 * Reads lock keys: HGETALL + PTTL + GET token + LLEN of its waiter queue for each, in one pipeline on a single Redis, one command each on a
 * Cluster (a pipeline there must stay in one slot). A key that is gone, or holds no owner, maps to null; a key
 * that is not a lock key is left out. Rejects when Redis cannot be reached.
 */
export async function readLocks(
  client: RedisClient,
  prefix: string,
  keys: readonly string[],
): Promise<Map<string, RawLock | null>> {
  const out = new Map<string, RawLock | null>();
  const items = keys.flatMap((key) => {
    const resource = resourceOfKey(prefix, key);
    return resource === null ? [] : [{ key, resource }];
  });
  if (items.length === 0) return out;
  if (isClusterClient(client)) {
    await Promise.all(
      items.map(async ({ key, resource }) => {
        const [hash, pttl, fence, queued] = await Promise.all([
          client.hgetall(key),
          client.pttl(key),
          client.get(tokenKey(resource)),
          client.llen(queueKey(key)),
        ]);
        out.set(key, parse(key, resource, hash, pttl, fence, queued));
      }),
    );
    return out;
  }
  const p = client.pipeline();
  for (const { key, resource } of items) p.hgetall(key).pttl(key).get(tokenKey(resource)).llen(queueKey(key));
  const replies: Reply = (await p.exec()) ?? [];
  const PER_LOCK = 4;
  items.forEach(({ key, resource }, i) => {
    const at = (j: number) => replies[PER_LOCK * i + j];
    const failed = at(0)?.[0] ?? at(1)?.[0] ?? at(2)?.[0] ?? at(3)?.[0];
    if (failed) throw failed;
    out.set(key, parse(key, resource, at(0)?.[1], at(1)?.[1], at(2)?.[1], at(3)?.[1]));
  });
  return out;
}

/**
 * Every lock key under `prefix` whose resource starts with `resourcePrefix`, with one SCAN pass per master
 * (never KEYS), reading each page as it comes. The walk costs O(keyspace): the observer does it on start and
 * on a periodic resync only, never per update.
 */
export async function scanLocks(
  client: RedisClient,
  prefix: string,
  resourcePrefix = "",
  count = 1_000,
): Promise<RawLock[]> {
  const out: RawLock[] = [];
  const pattern = `${prefix}{${resourcePrefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
  for (const node of masters(client)) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", count);
      cursor = next;
      // Read through the node that answered the SCAN: on a Cluster its keys live there.
      const read = await readLocks(isClusterClient(client) ? client : node, prefix, keys);
      for (const lock of read.values()) if (lock) out.push(lock);
    } while (cursor !== "0");
  }
  return out;
}
