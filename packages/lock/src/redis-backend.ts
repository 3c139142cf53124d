import type { Cluster, Redis } from "ioredis";
import type { AcquireReply, LockBackend, ReleaseReply, RenewItem } from "./backend.js";
import { listRedis } from "./redis-list.js";
import { createRedisSubscriber } from "./redis-subscriber.js";
import { fenceKey, releaseChannel } from "./resource.js";
import { type RedisClient, withScripts } from "./scripts/index.js";
import { keySlot } from "./slot.js";

/** The single-Redis (or Redis Cluster) backend: every operation is one script call. */
export function createRedisBackend(redis: RedisClient, prefix: string): LockBackend {
  const cmd = withScripts(redis);
  const sharded = (redis as { isCluster?: boolean }).isCluster === true;
  const shardedFlag = sharded ? "1" : "0";
  return {
    acquire(resource, key, owner, leaseMs, moreWaiters) {
      return cmd.lockyardAcquire(
        key,
        fenceKey(resource),
        owner,
        leaseMs,
        moreWaiters ? "1" : "0",
      ) as Promise<AcquireReply>;
    },
    async renew(key, owner, leaseMs) {
      return (await cmd.lockyardRenew(key, owner, leaseMs)) === 1;
    },
    renewMany: sharded ? (items) => renewBySlot(cmd, items) : (items) => renewBatch(cmd, items),
    release(resource, key, owner, leaseMs) {
      return cmd.lockyardRelease(
        key,
        releaseChannel(resource),
        owner,
        leaseMs,
        shardedFlag,
      ) as Promise<ReleaseReply>;
    },
    list(match, count, limit) {
      const nodes = sharded ? (redis as Cluster).nodes("master") : [redis as Redis];
      return listRedis(nodes, prefix, match, count, limit);
    },
    createSubscriber(onRelease) {
      return createRedisSubscriber(redis, sharded, onRelease);
    },
    async close() {},
  };
}

async function renewBatch(
  cmd: ReturnType<typeof withScripts>,
  items: readonly RenewItem[],
): Promise<boolean[]> {
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

/** A script may only touch keys of one slot on a Cluster: one call per slot, all in parallel. */
async function renewBySlot(
  cmd: ReturnType<typeof withScripts>,
  items: readonly RenewItem[],
): Promise<boolean[]> {
  const groups = new Map<number, number[]>();
  items.forEach((it, i) => {
    const slot = keySlot(it.key);
    const g = groups.get(slot);
    if (g) g.push(i);
    else groups.set(slot, [i]);
  });
  const out: boolean[] = new Array(items.length).fill(false);
  await Promise.all(
    [...groups.values()].map(async (idx) => {
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
