import type { Cluster, Redis } from "ioredis";
import { resourceOfKey, tokenKey, WAITERS_FIELD } from "./keys.js";

export type RedisClient = Redis | Cluster;

/** One Redis lock as read: owners, TTL, token and the waiters mark. */
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

function parse(key: string, resource: string, hash: unknown, pttl: unknown, fence: unknown): RawLock | null {
  const owners: RawLock["owners"] = [];
  let waiters = 0;
  for (const [field, value] of Object.entries((hash ?? {}) as Record<string, string>)) {
    if (field === WAITERS_FIELD) waiters = 1;
    else owners.push({ owner: field, count: Number(value) });
  }
  if (owners.length === 0) return null;
  owners.sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0));
  return {
    key,
    resource,
    owners,
    pttlMs: Number(pttl),
    token: fence === null || fence === undefined ? null : Number(fence),
    waiters,
    readAt: Date.now(),
  };
}

/**
 * Reads lock keys: HGETALL + PTTL + GET token for each, in one pipeline on a single Redis, one command each on a
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
        const [hash, pttl, fence] = await Promise.all([
          client.hgetall(key),
          client.pttl(key),
          client.get(tokenKey(resource)),
        ]);
        out.set(key, parse(key, resource, hash, pttl, fence));
      }),
    );
    return out;
  }
  const p = client.pipeline();
  for (const { key, resource } of items) p.hgetall(key).pttl(key).get(tokenKey(resource));
  const replies: Reply = (await p.exec()) ?? [];
  items.forEach(({ key, resource }, i) => {
    const failed = replies[3 * i]?.[0] ?? replies[3 * i + 1]?.[0] ?? replies[3 * i + 2]?.[0];
    if (failed) throw failed;
    out.set(key, parse(key, resource, replies[3 * i]?.[1], replies[3 * i + 1]?.[1], replies[3 * i + 2]?.[1]));
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
