import type { Cluster, Redis } from "ioredis";
import { parseConfig } from "../config.js";
import type { LockBackend } from "../core/backend.js";
import { InvalidOptionError } from "../errors.js";
import { checkNoKeyPrefix } from "../options.js";
import type { CommonLocksOptions, RedisLocks } from "../types.js";
import { createRedisBackend } from "./backend.js";
import { RedisLocksCore } from "./redis-locks.js";
import { type ReplicaAckOptions, withReplicaAck } from "./replica-ack.js";

export interface LocksOptions extends CommonLocksOptions, ReplicaAckOptions {
  /** An ioredis client or Cluster. It stays yours: close() does not disconnect it. */
  redis: Redis | Cluster;
}

const REDIS_KEYS = [
  "redis",
  "waitReplicas",
  "waitReplicasTimeoutMs",
] as const satisfies readonly (keyof LocksOptions)[];

/** Locks on one Redis (or one Redis Cluster). Throws InvalidOptionError synchronously on bad options. */
export function createLocks(options: LocksOptions): RedisLocks {
  if (typeof options !== "object" || options === null)
    throw new InvalidOptionError("options", options, "an object");
  const redis = options.redis as unknown as { defineCommand?: unknown } | undefined;
  if (typeof redis !== "object" || redis === null || typeof redis.defineCommand !== "function") {
    throw new InvalidOptionError("redis", options.redis, "an ioredis Redis or Cluster");
  }
  checkNoKeyPrefix("redis", redis);
  const cfg = parseConfig(options, undefined, REDIS_KEYS);
  const wrap = (b: LockBackend) => withReplicaAck(b, options.redis, options);
  const backend = wrap(createRedisBackend(options.redis, cfg.prefix, cfg.queueLeaseMs, cfg.instanceId));
  return new RedisLocksCore(backend, cfg, options.redis, wrap);
}
