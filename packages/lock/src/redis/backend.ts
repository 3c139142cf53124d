import type { Cluster, Redis } from "ioredis";
import type { LockBackend, ReleaseListener, RenewItem } from "../core/backend.js";
import { fenceKey, releaseChannel } from "../resource.js";
import { batchedScripts, type ReleaseTarget } from "./batch.js";
import { isConnectionError } from "./connection-error.js";
import { anyOrder, inOrderOn } from "./in-order.js";
import { listRedis } from "./list.js";
import { acquireThenRead, writeThenRelease } from "./reads.js";
import { type RedisClient, type ScriptCommands, withScripts } from "./scripts/index.js";
import { keySlot } from "./slot.js";
import { createRedisSubscriber } from "./subscriber.js";
import { chunks } from "./tick-batch.js";

/** Most locks one renewMany call carries: a larger call would block Redis for milliseconds. */
export const RENEW_CAP = 500;

/**
 * The single-Redis (or Redis Cluster) backend: every operation is one script call, and the acquires
 * (releases) issued in one tick share one call (see redis-batch.ts).
 */
export function createRedisBackend(redis: RedisClient, prefix: string): LockBackend {
  const cmd = withScripts(redis);
  const sharded = (redis as { isCluster?: boolean }).isCluster === true;
  // Answers in the order Redis ran the commands (in-order.ts); a Cluster's connections have no common order.
  const order = sharded ? anyOrder : inOrderOn(redis);
  const batched = batchedScripts(cmd, sharded, order);
  const target = (
    resource: string,
    key: string,
    owner: string,
    leaseMs: number,
    token: number | null,
    listener: ReleaseListener | undefined,
  ): ReleaseTarget => ({
    key,
    channel: releaseChannel(resource, prefix),
    fence: fenceKey(resource, prefix),
    owner,
    leaseMs,
    token,
    listener,
  });
  return {
    acquire(resource, key, owner, leaseMs, moreWaiters, reads) {
      if (reads) return acquireThenRead(redis, cmd, batched, order, key, owner, leaseMs, moreWaiters, reads);
      return batched.acquire(key, fenceKey(resource, prefix), owner, leaseMs, moreWaiters);
    },
    canRead: true,
    async renew(key, owner, leaseMs) {
      return (await cmd.lockyardRenew(key, owner, leaseMs)) === 1;
    },
    renewMany: (items) => renewMany(cmd, items, sharded),
    release(resource, key, owner, leaseMs, token, listener) {
      return batched.release(target(resource, key, owner, leaseMs, token, listener));
    },
    releaseAfter(write, resource, key, owner, leaseMs, token, listener) {
      return writeThenRelease(
        redis,
        batched,
        write,
        target(resource, key, owner, leaseMs, token, listener),
        sharded,
      );
    },
    noReply: isConnectionError,
    list(match, count, limit) {
      const nodes = sharded ? (redis as Cluster).nodes("master") : [redis as Redis];
      return listRedis(nodes, prefix, match, count, limit);
    },
    createSubscriber(onRelease, onResubscribed) {
      return createRedisSubscriber(redis, sharded, prefix, onRelease, onResubscribed);
    },
    async close() {},
  };
}

/**
 * At most RENEW_CAP locks per call (one slot per call on a Cluster, where a script may only touch one slot);
 * the calls of one tick are sent together, so they still cost about one round trip.
 */
async function renewMany(
  cmd: ScriptCommands,
  items: readonly RenewItem[],
  sharded: boolean,
): Promise<boolean[]> {
  const indexed = items.map((_, i) => i);
  const parts = chunks(indexed, RENEW_CAP, sharded ? (i) => keySlot(items[i]!.key) : undefined);
  const out: boolean[] = new Array(items.length).fill(false);
  await Promise.all(
    parts.map(async (idx) => {
      const res = await renewBatch(
        cmd,
        idx.map((i) => items[i]!),
      );
      idx.forEach((i, j) => {
        out[i] = res[j]!;
      });
    }),
  );
  return out;
}

async function renewBatch(cmd: ScriptCommands, items: readonly RenewItem[]): Promise<boolean[]> {
  const args: (string | number)[] = new Array(items.length * 3);
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!;
    args[i] = it.key;
    args[items.length + 2 * i] = it.owner;
    args[items.length + 2 * i + 1] = it.leaseMs;
  }
  const out = await cmd.lockyardRenewMany(items.length, ...args);
  return out.map((v) => v === 1);
}
