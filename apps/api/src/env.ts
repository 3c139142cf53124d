import { z } from "zod";

const csv = (s: string) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x.length > 0);

const httpUrl = z.url({ protocol: /^https?$/ });
const redisUrl = z.url({ protocol: /^rediss?$/ });
const postgresUrl = z.url({ protocol: /^postgres(ql)?$/ });

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(4001),
  HOST: z.string().min(1).default("127.0.0.1"),
  REDIS_URL: redisUrl.default("redis://127.0.0.1:6379"),
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
});

export type Env = Omit<z.output<typeof schema>, "INSTANCE_ID"> & { INSTANCE_ID: string };

/** Parses an environment record; throws a readable error listing every bad variable. */
export function parseEnv(source: Record<string, string | undefined>): Env {
  const result = schema.safeParse(source);
  if (!result.success) {
    throw new Error(`invalid environment:\n${z.prettifyError(result.error)}`);
  }
  const env = result.data;
  const apiUrls = env.API_URLS.length > 0 ? env.API_URLS : [`http://127.0.0.1:${env.PORT}`];
  return { ...env, API_URLS: apiUrls, INSTANCE_ID: env.INSTANCE_ID ?? `api-${env.PORT}` };
}

let cached: Env | undefined;

/** The process environment, parsed once. The only reader of process.env in the API. */
export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}
