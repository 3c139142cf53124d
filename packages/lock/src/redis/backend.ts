import type { Cluster, Redis } from "ioredis";
import type { LockBackend, NextWaiter, ReleaseListener, ReleaseReply, RenewItem } from "../core/backend.js";
import { type AcquireTarget, batchedScripts, type ReleaseTarget } from "./batch.js";
import { isConnectionError } from "./connection-error.js";
import { anyOrder, inOrderOn } from "./in-order.js";
import { lockNames } from "./key-names.js";
import { listRedis } from "./list.js";
import { acquireThenRead, readAfterGrant, writeThenRelease } from "./reads.js";
import { type RedisClient, withScripts } from "./scripts/index.js";
import { keySlot } from "./slot.js";
import { createRedisSubscriber } from "./subscriber.js";
import { chunks } from "./tick-batch.js";

/** Most locks one renewMany call carries: a larger call would block Redis for milliseconds. */
export const RENEW_CAP = 500;

/**
 * The single-Redis (or Redis Cluster) backend: every operation is one script call, and the acquires
 * (releases) issued in one tick share one call (see redis-batch.ts).
 */
export function createRedisBackend(
  redis: RedisClient,
  prefix: string,
  queueLeaseMs: number,
  /** This process's part of its owner ids: its handoffs are announced on a channel of its own. */
  instanceId: string,
): LockBackend {
  const cmd = withScripts(redis);
  const sharded = (redis as { isCluster?: boolean }).isCluster === true;
  // Object literals, never spreads, on the hot path: see batch.ts.
  // Answers in the order Redis ran the commands (in-order.ts); a Cluster's connections have no common order.
  const order = sharded ? anyOrder : inOrderOn(redis);
  const batched = batchedScripts(cmd, sharded, order);
  const shardedFlag = sharded ? "1" : "0";
  const namesOf = lockNames(prefix);
  const target = (
    resource: string,
    key: string,
    owner: string,
    leaseMs: number,
    token: number | null,
    listener: ReleaseListener | undefined,
    next: NextWaiter | undefined,
  ): ReleaseTarget => {
    const n = namesOf(resource, key);
    return {
      key,
      fence: n.fence,
      queue: n.queue,
      queueLeases: n.queueLeases,
      channel: n.channel,
      owner,
      leaseMs,
      token,
      queueLeaseMs,
      next: next?.owner ?? "",
      nextLeaseMs: next?.leaseMs ?? 0,
      keepMs: next?.keepMs ?? 0,
      listener,
    };
  };
  /** A grant to our own next waiter carries the promise of its reads, sent now that it holds the lock. */
  const withNextReads = (reply: ReleaseReply, key: string, fence: string, next: NextWaiter | undefined) =>
    reply[0] === 4 && next?.reads
      ? ([
          4,
          reply[1],
          readAfterGrant(redis, next.reads, { key, fence, owner: next.owner }),
          reply[3],
          reply[4],
          reply[5],
        ] as ReleaseReply)
      : reply;
  return {
    acquire(resource, key, owner, leaseMs, moreWaiters, reads, join) {
      const n = namesOf(resource, key);
      const t: AcquireTarget = {
        key,
        fence: n.fence,
        queue: n.queue,
        queueLeases: n.queueLeases,
        owner,
        leaseMs,
        more: moreWaiters ? "1" : "0",
        join: join ? "1" : "0",
        queueLeaseMs,
      };
      if (reads) return acquireThenRead(redis, cmd, batched, order, t, reads);
      return batched.acquire(t);
    },
    canRead: true,
    handsOver: true,
    async leave(resource, key, owner, successor) {
      const k = namesOf(resource, key);
      const reply = (await cmd.lockyardLeave(
        key,
        k.channel,
        k.fence,
        k.queue,
        k.queueLeases,
        owner,
        successor?.owner ?? "",
        successor?.leaseMs ?? 0,
        shardedFlag,
        queueLeaseMs,
      )) as ReleaseReply;
      return withNextReads(reply, key, k.fence, successor);
    },
    async renew(key, owner, leaseMs) {
      return (await cmd.lockyardRenew(key, owner, leaseMs)) === 1;
    },
    renewMany: (items) => renewMany((n, ...args) => cmd.lockyardRenewMany(n, ...args), items, sharded),
    release(resource, key, owner, leaseMs, token, listener, next) {
      const t = target(resource, key, owner, leaseMs, token, listener, next);
      const reply = batched.release(t);
      return next?.reads ? reply.then((r) => withNextReads(r, key, t.fence, next)) : reply;
    },
    releaseAfter(write, resource, key, owner, leaseMs, token, listener, next) {
      const t = target(resource, key, owner, leaseMs, token, listener, next);
      const sent = writeThenRelease(redis, batched, write, t, sharded);
      if (!next?.reads) return sent;
      return { reply: sent.reply.then((r) => withNextReads(r, key, t.fence, next)), write: sent.write };
    },
    noReply: isConnectionError,
    flush: () => batched.flush(),
    list(match, count, limit) {
      const nodes = sharded ? (redis as Cluster).nodes("master") : [redis as Redis];
      return listRedis(nodes, prefix, match, count, limit, { queued: true });
    },
    createSubscriber(onRelease, onResubscribed) {
      return createRedisSubscriber(redis, sharded, prefix, onRelease, onResubscribed, instanceId);
    },
    async close() {},
  };
}

/**
 * At most RENEW_CAP locks per call (one slot per call on a Cluster, where a script may only touch one slot);
 * the calls of one tick are sent together, so they still cost about one round trip.
 */
/** A renew-many script: key count, then the keys, then owner and leaseMs per key; 1 or 0 per key. */
export type RenewManySender = (numKeys: number, ...keysThenArgs: (string | number)[]) => Promise<number[]>;

export async function renewMany(
  send: RenewManySender,
  items: readonly RenewItem[],
  sharded: boolean,
): Promise<boolean[]> {
  const indexed = items.map((_, i) => i);
  const parts = chunks(indexed, RENEW_CAP, sharded ? (i) => keySlot(items[i]!.key) : undefined);
  const out: boolean[] = new Array(items.length).fill(false);
  await Promise.all(
    parts.map(async (idx) => {
      const res = await renewBatch(
        send,
        idx.map((i) => items[i]!),
      );
      idx.forEach((i, j) => {
        out[i] = res[j]!;
      });
    }),
  );
  return out;
}

async function renewBatch(send: RenewManySender, items: readonly RenewItem[]): Promise<boolean[]> {
  const args: (string | number)[] = new Array(items.length * 3);
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!;
    args[i] = it.key;
    args[items.length + 2 * i] = it.owner;
    args[items.length + 2 * i + 1] = it.leaseMs;
  }
  const out = await send(items.length, ...args);
  return out.map((v) => v === 1);
}
