import type { Locks } from "@lockyard/lock";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { pino } from "pino";
import { RunRegistry } from "./demo/runs/registry.js";
import { KeyedMutex } from "./lib/keyed-mutex.js";
import { LockFeed } from "./locks/feed.js";
import { lockSources } from "./locks/snapshot.js";
import { createMetrics, type Metrics } from "./metrics.js";
import type { PostgresMode } from "./postgres.js";
import { Admission } from "./stock/admission.js";

export interface Config {
  instanceId: string;
  /** Given to the demo's child processes, which open their own connection. */
  redisUrl: string;
  /** One Redis (`REDIS_URL`) or a Cluster (`REDIS_CLUSTER_NODES`). */
  redisTopology: "single" | "cluster";
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
  locks: Locks;
  /** Null when Redlock is unavailable; `redlockReason` says why. */
  redlock: Locks | null;
  redlockReason: string | null;
  /** Null while the `postgres` mode is unavailable; `postgresReason` says why. */
  postgres: PostgresMode | null;
  postgresReason: string | null;
  localMutex: KeyedMutex;
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

export type ServicesInput = Pick<Services, "redis" | "locks"> &
  Partial<Omit<Services, "config">> & { config?: Partial<Config> };

export interface RequestInfo {
  /** From `x-admin-token` or `authorization: Bearer`. */
  adminToken?: string | undefined;
  /** The peer address, for per-client limits. */
  clientAddress?: string | undefined;
}

/** Builds a context without HTTP, for tests (`createCaller`) and for the adapter below. */
export async function createContextInner(services: ServicesInput, request: RequestInfo = {}) {
  const config: Config = {
    instanceId: "api-test",
    redisUrl: "redis://127.0.0.1:6379",
    redisTopology: "single",
    apiUrls: [],
    adminToken: undefined,
    jobIntervalMs: 5000,
    orderProcessingMs: 300,
    redlockNodes: [],
    postgresServer: null,
    lockWaitMs: 30_000,
    demoProducts: { ids: ["1001"], prefix: "demo-" },
    maxScenarios: 2,
    maxScenariosPerClient: 1,
    orderRetentionMs: 24 * 3_600_000,
    runRetentionS: 3_600,
    ...services.config,
  };
  const redlock = services.redlock ?? null;
  const postgres = services.postgres ?? null;
  return {
    redis: services.redis,
    locks: services.locks,
    config,
    redlock,
    redlockReason: redlock ? null : (services.redlockReason ?? "REDLOCK_URLS is not set"),
    postgres,
    postgresReason: postgres ? null : (services.postgresReason ?? "DATABASE_URL is not set"),
    localMutex: services.localMutex ?? new KeyedMutex(),
    lockFeed:
      services.lockFeed ??
      new LockFeed({
        redis: services.redis,
        sources: () => lockSources({ locks: services.locks, redlock, postgres }),
        instanceId: config.instanceId,
        logger: services.logger ?? pino({ level: "silent" }),
      }),
    runs: services.runs ?? new RunRegistry(),
    admission: services.admission ?? new Admission({ maxWaiters: 600, maxQueuedWorkMs: 15_000 }),
    metrics: services.metrics ?? createMetrics(),
    logger: services.logger ?? pino({ level: "silent" }),
    startedAt: services.startedAt ?? Date.now(),
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
