const CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "ENOTCONN"]);
const NAMES = new Set(["MaxRetriesPerRequestError", "ClusterAllFailedError"]);
const MESSAGES =
  /connection is closed|stream isn't writeable|offline queue|command timed out|none of startup nodes|failed to refresh slots/i;

/**
 * True when a command failed without any reply from Redis (socket closed or refused, offline queue off or
 * flushed, retries exhausted), as opposed to a reply error (WRONGTYPE, NOSCRIPT…), which is Redis's answer.
 */
export function isConnectionError(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { name?: unknown; code?: unknown; message?: unknown };
  if (e.name === "ReplyError") return false;
  if (typeof e.name === "string" && NAMES.has(e.name)) return true;
  if (typeof e.code === "string" && CODES.has(e.code)) return true;
  return typeof e.message === "string" && MESSAGES.test(e.message);
}
