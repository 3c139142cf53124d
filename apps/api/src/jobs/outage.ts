import type { Logger } from "pino";

/**
 * Says once that Redis is unreachable, and once that it is back, instead of a warning with a stack on every
 * tick of a down Redis (every 5 s per instance). Other failures are still logged each time.
 */
export function outageLog(logger: Logger, what: string) {
  let down = false;
  return {
    /** A tick failed; `redisReady` is false when the connection is not up (ioredis status other than ready). */
    failed(err: unknown, redisReady: boolean) {
      const message = err instanceof Error ? err.message : String(err);
      if (redisReady) return void logger.warn({ err }, `${what} tick failed`);
      if (down) return;
      down = true;
      logger.warn({ err: message }, `${what} paused: Redis is unreachable; it resumes when Redis is back`);
    },
    /** A tick reached Redis. */
    ok() {
      if (!down) return;
      down = false;
      logger.info(`${what} resumed: Redis is reachable again`);
    },
  };
}
