import { pino } from "pino";
import type { Config, Services } from "../src/context.js";
import { RunRegistry } from "../src/demo/runs/registry.js";
import { Drain } from "../src/lib/drain.js";
import { KeyedMutex } from "../src/lib/keyed-mutex.js";
import { LockFeed } from "../src/locks/feed.js";
import { lockSources } from "../src/locks/snapshot.js";
import { createMetrics } from "../src/metrics.js";
import { Admission } from "../src/stock/admission.js";

/** What a test gives: the Redis and Locks it opened, and whichever other services or settings it cares about. */
export type ServicesInput = Pick<Services, "redis" | "locks"> &
  Partial<Omit<Services, "config">> & { config?: Partial<Config> };

export const testConfig: Config = {
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
};

/** The services the API's createServices would build, from what the test gave and defaults for the rest. */
export function testServices(input: ServicesInput): Services {
  const config: Config = { ...testConfig, ...input.config };
  const redlock = input.redlock ?? null;
  const postgres = input.postgres ?? null;
  const logger = input.logger ?? pino({ level: "silent" });
  return {
    config,
    redis: input.redis,
    locks: input.locks,
    redlock,
    redlockReason: redlock ? null : (input.redlockReason ?? "REDLOCK_URLS is not set"),
    postgres,
    postgresReason: postgres ? null : (input.postgresReason ?? "DATABASE_URL is not set"),
    localMutex: input.localMutex ?? new KeyedMutex(),
    drain: input.drain ?? new Drain(),
    lockFeed:
      input.lockFeed ??
      new LockFeed({
        redis: input.redis,
        sources: () => lockSources({ locks: input.locks, redlock, postgres }),
        instanceId: config.instanceId,
        logger,
      }),
    runs: input.runs ?? new RunRegistry(),
    admission: input.admission ?? new Admission({ maxWaiters: 600, maxQueuedWorkMs: 15_000 }),
    metrics: input.metrics ?? createMetrics(),
    logger,
    startedAt: input.startedAt ?? Date.now(),
  };
}
