import type { Locks, RedisLocks } from "@lockyard/lock";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { RunRegistry } from "./demo/runs/registry.js";
import type { Drain } from "./lib/drain.js";
import type { KeyedMutex } from "./lib/keyed-mutex.js";
import type { LockFeed } from "./locks/feed.js";
import type { Metrics } from "./metrics.js";
import type { PostgresMode } from "./postgres.js";
import type { Admission } from "./stock/admission.js";

export interface Config {
  instanceId: string;
  /** Given to the demo's child processes, which open their own connection. */
  redisUrl: string;
  /** One Redis (`REDIS_URL`), a Cluster (`REDIS_CLUSTER_NODES`) or a primary found through Sentinels (`REDIS_SENTINELS`). */
  redisTopology: "single" | "cluster" | "sentinel";
  apiUrls: string[];
  adminToken: string | undefined;
  jobIntervalMs: number;
  orderProcessingMs: number;
  redlockNodes: string[];
  /** `host:port/db` of DATABASE_URL (no credentials), or null when unset. */
  postgresServer: string | null;
  /** How long stock.deduct waits for its product's lock (LOCK_WAIT_MS). */
  lockWaitMs: number;
  /** The products demo runs may touch: these ids and any id with this prefix. */
  demoProducts: { ids: string[]; prefix: string };
  maxScenarios: number;
  maxScenariosPerClient: number;
  /** Idempotency window of an order record. */
  orderRetentionMs: number;
  /** How long a demo run's events stay replayable. */
  runRetentionS: number;
}

/** Long-lived, per-process dependencies shared by every request. */
export interface Services {
  config: Config;
  redis: Redis;
  /** The main Redis's locks: mutexes, semaphores, read-write locks. */
  locks: RedisLocks;
  /** Null when Redlock is unavailable; `redlockReason` says why. */
  redlock: Locks | null;
  redlockReason: string | null;
  /** Null while the `postgres` mode is unavailable; `postgresReason` says why. */
  postgres: PostgresMode | null;
  postgresReason: string | null;
  localMutex: KeyedMutex;
  /** The calls in flight, and the signal that stops their waits when the instance shuts down. */
  drain: Drain;
  /** The live view's one lock observer for this instance; `locks.watch` streams share it. */
  lockFeed: LockFeed;
  /** Demo runs started by this instance (to cancel them and wake local watchers). */
  runs: RunRegistry;
  /** Per-product caps on queued deducts. */
  admission: Admission;
  metrics: Metrics;
  logger: Logger;
  startedAt: number;
}

export interface RequestInfo {
  /** From `x-admin-token` or `authorization: Bearer`. */
  adminToken?: string | undefined;
  /** The peer address, for per-client limits. */
  clientAddress?: string | undefined;
}

/** A request's context, without HTTP: the adapter's factory below calls it, and tests with test/services.ts. */
export async function createContextInner(services: Services, request: RequestInfo = {}) {
  return {
    ...services,
    adminToken: request.adminToken,
    clientAddress: request.clientAddress,
  } satisfies Services & RequestInfo;
}

export type Context = Awaited<ReturnType<typeof createContextInner>>;

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The adapter's context factory: the process's services plus what this request proves. */
export function createContextFactory(services: Services) {
  return ({
    req,
  }: {
    req: { headers: Record<string, string | string[] | undefined>; socket?: { remoteAddress?: string } };
  }) => {
    const bearer = header(req.headers.authorization)?.match(/^Bearer\s+(.+)$/i)?.[1];
    return createContextInner(services, {
      adminToken: header(req.headers["x-admin-token"]) ?? bearer,
      clientAddress: req.socket?.remoteAddress,
    });
  };
}
