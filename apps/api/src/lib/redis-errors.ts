/**
 * True when an error means "Redis is unreachable right now" rather than a bug: ioredis rejects
 * immediately with these while offline (enableOfflineQueue: false) or after its retry budget.
 */
export function isRedisUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.name === "MaxRetriesPerRequestError") return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH)$/.test(code)) {
      return true;
    }
    if (
      /Connection is closed|Command timed out|Stream isn't writeable|enableOfflineQueue|Reached the max retries|connect ETIMEDOUT|LOADING/.test(
        e.message,
      )
    ) {
      return true;
    }
  }
  return false;
}
