import type { LockEvent, Locks } from "@lockyard/lock";
import * as lock from "@lockyard/lock";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Services } from "./context.js";
import { RunRegistry } from "./demo/runs/registry.js";
import type { Env } from "./env.js";
import { Drain } from "./lib/drain.js";
import { KeyedMutex } from "./lib/keyed-mutex.js";
import { LockFeed } from "./locks/feed.js";
import { lockSources } from "./locks/snapshot.js";
import { createMetrics, type LockBackendLabel, type Metrics, resourceKind } from "./metrics.js";
import { type LockFactory, lockFactory } from "./observed-locks.js";
import { connectPostgres, pgServer } from "./postgres.js";
import { createRedis, redisTarget, targetString, waitUntilReady } from "./redis.js";
import { Admission } from "./stock/admission.js";
import { highestPgFence } from "./stock/pg-fence-floor.js";
import type { Telemetry } from "./telemetry.js";

/** Feeds the library's lock events into the Prometheus metrics. */
export function lockMetrics(metrics: Metrics, backend: LockBackendLabel) {
  return (e: LockEvent) => {
    const labels = { resource_kind: resourceKind(e.resource), backend };
    switch (e.type) {
      case "acquired":
        metrics.acquisitions.inc(labels);
        metrics.lockWait.observe(labels, e.waitedMs / 1000);
        break;
      case "released":
        metrics.lockHold.observe(labels, e.heldMs / 1000);
        break;
      case "renewed":
        metrics.renewals.inc(labels);
        break;
      case "lost":
        metrics.losses.inc(labels);
        break;
      case "timeout":
        metrics.timeouts.inc(labels);
        break;
      case "contended":
        metrics.contended.inc(labels);
        break;
    }
  };
}

function createRedlockIfConfigured(
  env: Env,
  logger: Logger,
  onEvent: (e: LockEvent) => void,
  create: LockFactory,
): { redlock: Locks | null; reason: string | null; clients: Redis[] } {
  if (env.REDLOCK_URLS.length === 0) return { redlock: null, reason: "REDLOCK_URLS is not set", clients: [] };
  const clients = env.REDLOCK_URLS.map((url, i) => createRedis(url, { name: `redlock-${i}`, logger }));
  const redlock = create(lock.createRedlock, {
    clients,
    leaseMs: env.LOCK_LEASE_MS,
    instanceId: env.INSTANCE_ID,
    onEvent,
  });
  return { redlock, reason: null, clients };
}

/** `telemetry`: the OpenTelemetry SDK when it runs (telemetry.ts); every Locks is then instrumented. */
export function createServices(env: Env, logger: Logger, telemetry: Telemetry | null = null) {
  const metrics = createMetrics({ defaults: true });
  const target = redisTarget(env);
  const redis = createRedis(target, { name: env.INSTANCE_ID, logger });
  const locks = lockFactory(
    env,
    telemetry,
    "redis",
  )(lock.createLocks, {
    redis,
    // On a Cluster a waiting head also looks again every 100 ms (500 ms by default): after a failover the
    // release messages of the promoted master's slots were seen not to arrive for tens of seconds in some
    // runs (the sharded subscriber not following the promotion), and a burst's waiters, served only by that
    // fallback, ran past LOCK_WAIT_MS. One attempt per 100 ms per contended product per instance, at most.
    ...(target.topology === "cluster" ? { retry: { maxMs: 100 } } : {}),
    leaseMs: env.LOCK_LEASE_MS,
    instanceId: env.INSTANCE_ID,
    onEvent: lockMetrics(metrics, "redis"),
  });
  const rl = createRedlockIfConfigured(
    env,
    logger,
    lockMetrics(metrics, "redlock"),
    lockFactory(env, telemetry, "redlock"),
  );
  const services: Services = {
    config: {
      instanceId: env.INSTANCE_ID,
      redisUrl: targetString(target),
      redisTopology: target.topology,
      apiUrls: env.API_URLS,
      adminToken: env.ADMIN_TOKEN,
      jobIntervalMs: env.JOB_INTERVAL_MS,
      orderProcessingMs: env.ORDER_PROCESSING_MS,
      redlockNodes: env.REDLOCK_URLS.map((u) => new URL(u).host),
      postgresServer: env.DATABASE_URL ? pgServer(env.DATABASE_URL) : null,
      lockWaitMs: env.LOCK_WAIT_MS,
      demoProducts: { ids: env.DEMO_PRODUCTS, prefix: env.DEMO_PRODUCT_PREFIX },
      maxScenarios: env.MAX_SCENARIOS,
      maxScenariosPerClient: env.MAX_SCENARIOS_PER_CLIENT,
      orderRetentionMs: env.ORDER_RETENTION_HOURS * 3_600_000,
      runRetentionS: env.RUN_RETENTION_S,
    },
    redis,
    locks,
    redlock: rl.redlock,
    redlockReason: rl.reason,
    postgres: null,
    postgresReason: null,
    localMutex: new KeyedMutex(),
    drain: new Drain(),
    lockFeed: new LockFeed({
      redis,
      sources: () => lockSources(services),
      instanceId: env.INSTANCE_ID,
      logger,
    }),
    runs: new RunRegistry(),
    admission: new Admission({
      maxWaiters: env.MAX_WAITERS_PER_PRODUCT,
      maxQueuedWorkMs: env.MAX_QUEUED_WORK_MS,
    }),
    metrics,
    logger,
    startedAt: Date.now(),
  };
  // Request contexts read these per request, so the mode turns on as soon as the migration succeeds.
  const pg = connectPostgres({
    url: env.DATABASE_URL,
    instanceId: env.INSTANCE_ID,
    leaseMs: env.LOCK_LEASE_MS,
    onEvent: lockMetrics(metrics, "postgres"),
    create: lockFactory(env, telemetry, "postgres"),
    logger,
    fenceFloor: async () => {
      await waitUntilReady(redis, 5_000);
      return highestPgFence(redis);
    },
    onChange(mode, reason) {
      services.postgres = mode;
      services.postgresReason = reason;
    },
  });
  const close = async () => {
    services.runs.cancelAll("the API instance is shutting down");
    services.lockFeed.close();
    await locks.close().catch(() => undefined);
    await rl.redlock?.close().catch(() => undefined);
    await pg.close();
    for (const c of [redis, ...rl.clients]) c.disconnect();
  };
  return { services, close, ready: pg.ready, redlockClients: rl.clients };
}
