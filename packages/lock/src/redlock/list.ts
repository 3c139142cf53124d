import type { Redis } from "ioredis";
import type { Clock } from "../core/clock.js";
import { QuorumError } from "../errors.js";
import { listRedis } from "../redis/list.js";
import type { LockInfo } from "../types.js";
import { firstError, settleAll } from "./settle.js";

const LIST_TIMEOUT_MS = 5_000;

type Info = Omit<LockInfo, "leaseMs">;

/**
 * Lists every node and keeps the locks that a quorum of nodes agree on: an owner counts when it holds the
 * key on at least `quorum` nodes, and `pttlMs` is how long that stays true (the quorum-th longest TTL).
 * No token: Redlock has none.
 */
export async function listRedlock(
  clock: Clock,
  clients: readonly Redis[],
  quorum: number,
  prefix: string,
  match: string,
  count: number,
  limit: number,
): Promise<Info[]> {
  const answers = await settleAll(
    clock,
    clients.map((c) => listRedis([c], prefix, match, count, limit)),
    LIST_TIMEOUT_MS,
  );
  const lists: Info[][] = [];
  for (const a of answers) if (a.ok) lists.push(a.value);
  if (lists.length < quorum) throw new QuorumError(quorum, lists.length, { cause: firstError(answers) });

  const byKey = new Map<
    string,
    { resource: string; owners: Map<string, { counts: number[]; pttls: number[] }> }
  >();
  for (const list of lists) {
    for (const info of list) {
      let k = byKey.get(info.key);
      if (!k) {
        k = { resource: info.resource, owners: new Map() };
        byKey.set(info.key, k);
      }
      for (const o of info.owners) {
        let seen = k.owners.get(o.owner);
        if (!seen) {
          seen = { counts: [], pttls: [] };
          k.owners.set(o.owner, seen);
        }
        seen.counts.push(o.count);
        seen.pttls.push(info.pttlMs);
      }
    }
  }
  const out: Info[] = [];
  for (const [key, { resource, owners }] of byKey) {
    if (out.length >= limit) break;
    const held: { owner: string; count: number }[] = [];
    let pttlMs = -2;
    for (const [owner, seen] of owners) {
      if (seen.counts.length < quorum) continue;
      held.push({ owner, count: Math.max(...seen.counts) });
      const pttl = seen.pttls.sort((a, b) => b - a)[quorum - 1]!;
      if (pttl > pttlMs) pttlMs = pttl;
    }
    if (held.length > 0) out.push({ key, resource, owners: held, pttlMs });
  }
  return out;
}
