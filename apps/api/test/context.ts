import { randomBytes } from "node:crypto";
import { createLocks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { inject } from "vitest";
import { type Config, createContextInner, type ServicesInput } from "../src/context.js";
import type { LockEvent } from "../src/lock.js";
import { redisOptions, waitUntilReady } from "../src/redis.js";
import { createCaller } from "../src/root.js";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
    redisPort: number;
  }
}

export const uid = (prefix = "t") => `${prefix}-${randomBytes(4).toString("hex")}`;

/** A real context on the test Redis, plus a caller and the lock events it saw. */
export async function testContext(
  opts: { config?: Partial<Config>; leaseMs?: number; redisUrl?: string } & Partial<ServicesInput> = {},
) {
  const redisUrl = opts.redisUrl ?? inject("redisUrl");
  const redis = new Redis(redisUrl, redisOptions);
  await waitUntilReady(redis, 5_000);
  const events: (LockEvent & { at: number })[] = [];
  const instanceId = opts.config?.instanceId ?? uid("api");
  const locks = createLocks({
    redis,
    instanceId,
    leaseMs: opts.leaseMs ?? 2_000,
    onEvent: (e) => events.push({ ...e, at: performance.now() }),
  });
  const ctx = await createContextInner({
    ...opts,
    redis,
    locks,
    config: { instanceId, redisUrl, ...opts.config },
  });
  return {
    ctx,
    redis,
    locks,
    events,
    caller: createCaller(ctx),
    async close() {
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
