import type { Cluster, Redis } from "ioredis";
import type { LockBackend, ReleaseReply } from "../core/backend.js";
import { renewMany } from "./backend.js";
import { isConnectionError } from "./connection-error.js";
import { lockNames } from "./key-names.js";
import { listRedis, type OwnerOf } from "./list.js";
import { type RedisClient, type SharedMode, withScripts } from "./scripts/index.js";
import { createRedisSubscriber } from "./subscriber.js";

export interface SharedBackendOptions {
  /** The kind's own key prefix (`<prefix>semaphore:`, `<prefix>rw:`): see resource.ts. */
  prefix: string;
  mode: SharedMode;
  /** The permit count of a semaphore's key (mode "permit"). */
  permitsOf?: (key: string) => number;
  /** How long a refused writer's mark blocks new readers: one queue lease, re-set by each of its looks. */
  writerMarkMs: number;
  /** How long a semaphore waiter's queue entry lives unrefreshed (retry.queueLeaseMs). */
  queueLeaseMs: number;
}

/**
 * The store of the locks several owners may hold at once (semaphore permits, read and write holds of a
 * read-write lock), for the same core as the mutex: one script per attempt, release and renew batch
 * (scripts/shared-*.ts). Semaphore waiters queue in Redis (one entry per process, fair admission), and a
 * release grants a freed permit to its own process's next waiter when that waiter's attempt would have got it
 * (no handoff to another process: a freed permit owed to one is announced, and its head looks); read-write
 * waiters do not queue (the writer mark is their fairness). A release publishes and the waiting processes'
 * heads look.
 */
export function createSharedBackend(redis: RedisClient, o: SharedBackendOptions): LockBackend {
  const cmd = withScripts(redis);
  const sharded = (redis as { isCluster?: boolean }).isCluster === true;
  const shardedFlag = sharded ? "1" : "0";
  const namesOf = lockNames(o.prefix);
  const releaseMode = o.mode === "write" ? "write" : "read";
  const permitsOf = o.permitsOf ?? (() => 0);
  const send = (n: number, ...args: (string | number)[]) => cmd.lockyardSharedRenewMany(n, ...args);
  const queues = o.mode === "permit";
  return {
    shared: true,
    queues,
    async acquire(resource, key, owner, leaseMs, moreWaiters, _reads, join) {
      const n = namesOf(resource, key);
      const r = await cmd.lockyardSharedAcquire(
        key,
        n.fence,
        n.queue,
        n.queueLeases,
        n.channel,
        owner,
        leaseMs,
        moreWaiters ? "1" : "0",
        o.mode,
        permitsOf(key),
        o.writerMarkMs,
        join && queues ? "1" : "0",
        o.queueLeaseMs,
        shardedFlag,
      );
      return r[0] === 1 ? [1, r[1], r[2]] : [0, r[1]];
    },
    async leave(resource, key, owner, successor) {
      const n = namesOf(resource, key);
      // The process's next waiter takes the leaver's place (and with it its turn) rather than queueing anew.
      const succ = successor?.owner ?? "";
      await cmd.lockyardSharedLeave(
        n.queue,
        n.queueLeases,
        n.channel,
        owner,
        shardedFlag,
        succ,
        o.queueLeaseMs,
      );
      return [0];
    },
    ...(o.mode === "write" && {
      async withdraw(resource: string, key: string, owner: string) {
        await cmd.lockyardSharedWithdraw(key, namesOf(resource, key).channel, owner, shardedFlag);
      },
    }),
    async renew(key, owner, leaseMs) {
      const [ok] = await renewMany(send, [{ key, owner, leaseMs }], sharded);
      return ok === true;
    },
    renewMany: (items) => renewMany(send, items, sharded),
    async release(resource, key, owner, _leaseMs, token, _listener, next) {
      const n = namesOf(resource, key);
      // A semaphore's release may grant the freed permit to this process's next waiter (no call of its own).
      const r = await cmd.lockyardSharedRelease(
        key,
        n.channel,
        n.queue,
        n.queueLeases,
        n.fence,
        owner,
        releaseMode,
        token === null ? "" : String(token),
        shardedFlag,
        queues && next ? next.owner : "",
        next?.leaseMs ?? 0,
        o.queueLeaseMs,
      );
      if (r[0] === 4) return [4, r[1], undefined, undefined, r[2]];
      return (r[0] === 1 ? [1, r[1]] : [r[0]]) as ReleaseReply;
    },
    noReply: isConnectionError,
    list(match, count, limit) {
      const nodes = sharded ? (redis as Cluster).nodes("master") : [redis as Redis];
      return listRedis(nodes, o.prefix, match, count, limit, {
        ownerOf: o.mode === "permit" ? permitOwner : rwOwner,
        queued: queues,
      });
    },
    createSubscriber(onRelease, onResubscribed) {
      return createRedisSubscriber(redis, sharded, o.prefix, onRelease, onResubscribed);
    },
    async close() {},
  };
}

/** A `reads|writes|expiresAt|token` field (shared-body.ts): a permit's count is its reads (re-entries). */
const permitOwner: OwnerOf = (owner, value) => ({ owner, count: Number(value.split("|", 1)[0]) });
const rwOwner: OwnerOf = (owner, value) => {
  const [reads, writes] = value.split("|");
  return { owner, count: Number(reads) + Number(writes), mode: Number(writes) > 0 ? "write" : "read" };
};
