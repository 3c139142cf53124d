import { z } from "zod";

const csv = (s: string) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x.length > 0);

const httpUrl = z.url({ protocol: /^https?$/ });
const redisUrl = z.url({ protocol: /^rediss?$/ });
const postgresUrl = z.url({ protocol: /^postgres(ql)?$/ });

/** `host:port,host:port,…` as `{ host, port }`s; unset or empty: none. */
const hostPorts = z
  .string()
  .optional()
  .transform((s) => (s ? csv(s) : []))
  .pipe(z.array(z.string().regex(/^[A-Za-z0-9_.-]+:\d{1,5}$/, "expected host:port")))
  .transform((list) =>
    list.map((hp) => {
      const i = hp.lastIndexOf(":");
      return { host: hp.slice(0, i), port: Number(hp.slice(i + 1)) };
    }),
  )
  .pipe(z.array(z.object({ host: z.string(), port: z.number().int().min(1).max(65_535) })));

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(4001),
  HOST: z.string().min(1).default("127.0.0.1"),
  REDIS_URL: redisUrl.default("redis://127.0.0.1:6379"),
  /**
   * Seed nodes of a Redis Cluster (`host:port,host:port,…`). Set, every part of the API uses an ioredis
   * Cluster found from them, and REDIS_URL is not used.
   */
  REDIS_CLUSTER_NODES: hostPorts,
  /**
   * Redis Sentinels (`host:port,host:port,…`) watching the primary named REDIS_SENTINEL_NAME. Set, every part
   * of the API finds the primary through them, and the new one after a failover, without a restart; REDIS_URL
   * is not used.
   */
  REDIS_SENTINELS: hostPorts,
  REDIS_SENTINEL_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, "REDIS_SENTINEL_NAME must be 1-64 of [A-Za-z0-9_.-]")
    .default("mymaster"),
  REDLOCK_URLS: z
    .string()
    .optional()
    .transform((s) => (s ? csv(s) : []))
    .pipe(z.array(redisUrl)),
  /** PostgreSQL for the `postgres` demo mode; unset, the mode reports itself unavailable. */
  DATABASE_URL: z
    .string()
    .optional()
    .transform((s) => (s ? s : undefined))
    .pipe(postgresUrl.optional()),
  INSTANCE_ID: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, "INSTANCE_ID must be 1-64 of [A-Za-z0-9_.-]")
    .optional(),
  API_URLS: z
    .string()
    .optional()
    .transform((s) => (s ? csv(s).map((u) => u.replace(/\/+$/, "")) : []))
    .pipe(z.array(httpUrl)),
  ADMIN_TOKEN: z
    .string()
    .optional()
    .transform((s) => (s ? s : undefined)),
  WEB_ORIGINS: z
    .string()
    .default("http://localhost:3000,http://127.0.0.1:3000")
    .transform(csv)
    .pipe(z.array(httpUrl)),
  JOB_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(5000),
  ORDER_PROCESSING_MS: z.coerce.number().int().min(0).max(60_000).default(300),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Lease of the API's locks (ms): renewed by the watchdog while held, so it bounds a crashed holder. */
  LOCK_LEASE_MS: z.coerce.number().int().min(1_000).max(300_000).default(10_000),
  /** How long stock.deduct waits for its product's lock (ms) before answering `lock-timeout`. */
  LOCK_WAIT_MS: z.coerce.number().int().min(0).max(300_000).default(30_000),
  // --- OpenTelemetry (README "OpenTelemetry") ---
  /** OTLP/HTTP collector base URL (`/v1/traces`, `/v1/metrics` are appended). Unset: no spans, no OTLP metrics. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .optional()
    .transform((s) => (s ? s.replace(/\/+$/, "") : undefined))
    .pipe(httpUrl.optional()),
  OTEL_SERVICE_NAME: z.string().min(1).max(128).default("lockyard-api"),
  /** How often OTLP metrics are pushed (ms). */
  OTEL_METRIC_EXPORT_INTERVAL: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /** Put an HMAC of lock names and owners on spans instead of the names (lock names may hold personal data). */
  LOCK_HASH_RESOURCE_NAMES: z
    .enum(["true", "false", "1", "0", ""])
    .optional()
    .transform((s) => s === "true" || s === "1"),
  /** The HMAC key: the same on every instance gives a resource one hash everywhere. Unset: random per process. */
  LOCK_HASH_KEY: z
    .string()
    .optional()
    .transform((s) => (s ? s : undefined)),
  /** What /readyz requires besides Redis (comma-separated): `redlock`, `postgres`. */
  READY_REQUIRES: z
    .string()
    .optional()
    .transform((s) => (s ? csv(s) : []))
    .pipe(z.array(z.enum(["redlock", "postgres"]))),
  // --- exposure limits (README "Security") ---
  /** Extra `Host` values accepted besides loopback on PORT and the hosts of API_URLS (host or host:port). */
  ALLOWED_HOSTS: z
    .string()
    .optional()
    .transform((s) => (s ? csv(s).map((h) => h.toLowerCase()) : [])),
  /** Products the demo runs may reset and deduct: these ids, plus any id starting with the prefix. */
  DEMO_PRODUCTS: z.string().default("1001").transform(csv),
  DEMO_PRODUCT_PREFIX: z.string().max(32).default("demo-"),
  MAX_BATCH_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  /** Whole request (headers + body) must arrive within this; streaming responses are not affected. */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  MAX_CONNECTIONS_PER_CLIENT: z.coerce.number().int().min(1).max(10_000).default(256),
  MAX_STREAMS_PER_CLIENT: z.coerce.number().int().min(1).max(1_000).default(20),
  MAX_SCENARIOS: z.coerce.number().int().min(1).max(50).default(2),
  MAX_SCENARIOS_PER_CLIENT: z.coerce.number().int().min(1).max(50).default(1),
  /** Deducts queued or running on one product on one instance; more answer TOO_MANY_REQUESTS. */
  MAX_WAITERS_PER_PRODUCT: z.coerce.number().int().min(1).max(10_000).default(600),
  /** Sum of `workMs` queued behind one product's lock on one instance (lock modes). */
  MAX_QUEUED_WORK_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  /** How long an order's idempotency record (and its index entry) is kept: at least 24 h. */
  ORDER_RETENTION_HOURS: z.coerce
    .number()
    .min(24)
    .max(24 * 365)
    .default(24),
  /** How long a finished demo run's events stay replayable. */
  RUN_RETENTION_S: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 24 * 3600)
    .default(3600),
});

export type Env = Omit<z.output<typeof schema>, "INSTANCE_ID"> & { INSTANCE_ID: string };

/** One line naming every bad variable and what is wrong with it; what the API and `npm start` print. */
function invalid(problems: string[]): Error {
  return new Error(
    `invalid environment: ${problems.join("; ")}. Fix ${problems.length > 1 ? "these variables" : "it"} in the shell or .env (.env.example describes each)`,
  );
}

/** Parses an environment record; throws a readable one-line error listing every bad variable. */
export function parseEnv(source: Record<string, string | undefined>): Env {
  const result = schema.safeParse(source);
  if (!result.success) {
    throw invalid(result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  }
  const env = result.data;
  if (env.REDIS_CLUSTER_NODES.length > 0 && env.REDIS_SENTINELS.length > 0) {
    throw invalid([
      "REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set: a Redis Cluster has no Sentinels; set one of them",
    ]);
  }
  const apiUrls = env.API_URLS.length > 0 ? env.API_URLS : [`http://127.0.0.1:${env.PORT}`];
  return { ...env, API_URLS: apiUrls, INSTANCE_ID: env.INSTANCE_ID ?? `api-${env.PORT}` };
}

let cached: Env | undefined;

/** The process environment, parsed once. The only reader of process.env in the API. */
export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}
