import { randomBytes } from "node:crypto";
import type { LockEvent } from "@lockyard/lock";
import { createLocks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { pino } from "pino";
import { inject } from "vitest";
import { type Config, createContextInner } from "../src/context.js";
import { connectPostgres, type PostgresMode } from "../src/postgres.js";
import { redisOptions, waitUntilReady } from "../src/redis.js";
import { createCaller } from "../src/root.js";
import { highestPgFence } from "../src/stock/pg-fence-floor.js";
import { type ServicesInput, testServices } from "./services.js";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
    redisPort: number;
    pgUrl: string;
  }
}

export const uid = (prefix = "t") => `${prefix}-${randomBytes(4).toString("hex")}`;

/** The `postgres` mode on a real PostgreSQL, opened the way the API opens it. */
export async function testPostgres(opts: {
  url?: string;
  instanceId: string;
  leaseMs: number;
  onEvent?: (e: LockEvent) => void;
  fenceFloor?: () => Promise<number>;
}) {
  let mode: PostgresMode | null = null;
  let reason: string | null = null;
  const conn = connectPostgres({
    url: opts.url ?? inject("pgUrl"),
    instanceId: opts.instanceId,
    leaseMs: opts.leaseMs,
    ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    ...(opts.fenceFloor ? { fenceFloor: opts.fenceFloor } : {}),
    logger: pino({ level: "silent" }),
    onChange(m, r) {
      mode = m;
      reason = r;
    },
  });
  await conn.ready;
  if (!mode) throw new Error(`the postgres mode did not open: ${reason}`);
  return { mode: mode as PostgresMode, close: conn.close };
}

/** A real context on the test Redis, plus a caller and the lock events it saw. */
export async function testContext(
  opts: {
    config?: Partial<Config>;
    leaseMs?: number;
    redisUrl?: string;
    withPostgres?: boolean;
    /** Open the postgres mode as the API does: the sequence raised past the highest `pgFence` first. */
    pgFenceFloor?: boolean;
    /** Shorter than the API's 5 s, for tests that wait for a command to time out. */
    commandTimeoutMs?: number;
  } & Partial<ServicesInput> = {},
) {
  const redisUrl = opts.redisUrl ?? inject("redisUrl");
  const redis = new Redis(redisUrl, {
    ...redisOptions,
    ...(opts.commandTimeoutMs ? { commandTimeout: opts.commandTimeoutMs } : {}),
  });
  // Tests stop Redis on purpose; its connection errors are expected (the API logs them via createRedis).
  redis.on("error", () => {});
  await waitUntilReady(redis, 5_000);
  const events: (LockEvent & { at: number; backend: "redis" | "postgres" })[] = [];
  const instanceId = opts.config?.instanceId ?? uid("api");
  const leaseMs = opts.leaseMs ?? 2_000;
  const locks = createLocks({
    redis,
    instanceId,
    leaseMs,
    onEvent: (e) => events.push({ ...e, at: performance.now(), backend: "redis" }),
  });
  const pg = opts.withPostgres
    ? await testPostgres({
        instanceId,
        leaseMs,
        onEvent: (e) => events.push({ ...e, at: performance.now(), backend: "postgres" }),
        ...(opts.pgFenceFloor ? { fenceFloor: () => highestPgFence(redis) } : {}),
      })
    : null;
  const ctx = await createContextInner(
    testServices({
      ...opts,
      redis,
      locks,
      ...(pg ? { postgres: pg.mode } : {}),
      config: { instanceId, redisUrl, ...opts.config },
    }),
  );
  return {
    ctx,
    redis,
    locks,
    events,
    caller: createCaller(ctx),
    async close() {
      ctx.lockFeed.close();
      await pg?.close();
      await locks.close();
      redis.disconnect();
    },
  };
}

/** Collects every value of an async iterable (a subscription run through the caller). */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const v of iterable) out.push(v);
  return out;
}
