import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";

/**
 * The one place that creates Redis connections. They fail fast while Redis is down (no offline
 * queue, one retry per request, bounded connect and command time) so requests answer 503 at once,
 * never re-send a command that may already have run, and keep reconnecting in the background forever
 * so the API recovers by itself.
 */
export const redisOptions = {
  enableOfflineQueue: false,
  // ioredis re-sends commands still unanswered when a connection drops. A decrement whose reply was lost
  // would run twice; unanswered, it fails at commandTimeout and the caller is told it may have run.
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 2_000,
  commandTimeout: 5_000,
  retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 6), 2_000),
} satisfies RedisOptions;

export function createRedis(url: string, opts: { name: string; logger?: Logger }): Redis {
  const redis = new Redis(url, { ...redisOptions, connectionName: opts.name });
  let down = false;
  redis.on("error", (err: Error) => {
    // ioredis emits one error per failed reconnect; log the transition, not every attempt.
    if (!down) opts.logger?.warn({ err: err.message, connection: opts.name }, "redis unavailable");
    down = true;
  });
  redis.on("ready", () => {
    if (down) opts.logger?.info({ connection: opts.name }, "redis reachable again");
    down = false;
  });
  return redis;
}

/** Resolves once the connection is ready, or after timeoutMs (the caller serves 503s meanwhile). */
export function waitUntilReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    timer.unref();
    redis.on("ready", onReady);
  });
}
