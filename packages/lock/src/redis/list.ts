import type { Redis } from "ioredis";
import { parseMatch } from "../match.js";
import { isMarkField, PERMITS_FIELD } from "../options.js";
import { fenceKeyOf, queueKeyOf, resourceOfKey } from "../resource.js";
import type { LockInfo, LockOwnerInfo } from "../types.js";

/** An owner field and its value → what list() says of that owner (the mutex stores the count itself; shared-body.ts more). */
export type OwnerOf = (owner: string, value: string) => LockOwnerInfo;

const mutexOwner: OwnerOf = (owner, value) => ({ owner, count: Number(value) });

export interface ListShape {
  /** What each owner field says (default: the mutex's re-entry count). */
  ownerOf?: OwnerOf;
  /** The kind keeps a queue of waiting processes (queue.ts): report its length as `waiting`. */
  queued?: boolean;
}

/**
 * SCAN (never KEYS) each node, then one pipeline per page: HGETALL + PTTL + GET fence (+ LLEN queue) for every
 * key. `match` is a glob over names (match.ts): SCAN gets its form over keys, and each decoded name is tested exactly.
 */
export async function listRedis(
  nodes: Redis[],
  prefix: string,
  match: string,
  count: number,
  limit: number,
  { ownerOf = mutexOwner, queued = false }: ListShape = {},
): Promise<Omit<LockInfo, "leaseMs">[]> {
  const stride = queued ? 4 : 3;
  const out: Omit<LockInfo, "leaseMs">[] = [];
  const m = parseMatch(match);
  const pattern = m.scan(prefix);
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", count);
      cursor = next;
      const page: { key: string; resource: string }[] = [];
      for (const key of keys) {
        const resource = resourceOfKey(prefix, key);
        if (resource !== null && m.test(resource)) page.push({ key, resource });
      }
      if (page.length === 0) continue;
      const p = node.pipeline();
      for (const { key } of page) {
        p.hgetall(key).pttl(key).get(fenceKeyOf(key));
        if (queued) p.llen(queueKeyOf(key));
      }
      const replies = (await p.exec()) ?? [];
      page.forEach(({ key, resource }, i) => {
        const hash = replies[stride * i]?.[1] as Record<string, string> | null;
        const pttl = replies[stride * i + 1]?.[1] as number;
        const fence = replies[stride * i + 2]?.[1] as string | null;
        const owners = Object.entries(hash ?? {})
          .filter(([f]) => !isMarkField(f))
          .map(([owner, value]) => ownerOf(owner, value));
        // The key expired between SCAN and the pipeline.
        if (owners.length === 0 || out.length >= limit) return;
        const info: Omit<LockInfo, "leaseMs"> = { key, resource, owners, pttlMs: pttl };
        if (fence !== null && fence !== undefined) info.token = Number(fence);
        const permits = hash?.[PERMITS_FIELD];
        if (permits !== undefined) info.permits = Number(permits);
        if (queued) info.waiting = Number(replies[stride * i + 3]?.[1] ?? 0);
        out.push(info);
      });
    } while (cursor !== "0" && out.length < limit);
  }
  return out;
}
