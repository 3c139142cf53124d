const CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTCONN",
  "EHOSTUNREACH",
]);
const NAMES = new Set(["MaxRetriesPerRequestError", "ClusterAllFailedError", "ReplyLostError"]);
const MESSAGES =
  /connection is closed|stream isn't writeable|offline queue|enableofflinequeue|cluster isn't ready|command timed out|reached the max retries|connect etimedout|none of startup nodes|failed to refresh slots/i;
// Redis answers LOADING while it reads its dataset after a restart: it ran nothing, and will serve soon.
const LOADING = /^LOADING\b/;
/** How deep a wrapped error (`cause`) is looked into: the library and the API wrap at most twice. */
const CAUSE_DEPTH = 5;

/**
 * True when Redis is unreachable right now rather than answering: a command failed without any reply
 * (socket closed or refused, offline queue off or flushed, retries exhausted, no Cluster node reachable),
 * or Redis answered LOADING (restarting: the command did not run). A reply error (WRONGTYPE, NOSCRIPT…) is
 * Redis's answer and is not. Errors that wrap one of these in `cause` count too.
 */
export function isConnectionError(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < CAUSE_DEPTH && typeof e === "object" && e !== null; depth++) {
    if (isUnavailable(e as ErrorLike)) return true;
    e = (e as ErrorLike).cause;
  }
  return false;
}

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
}

function isUnavailable(e: ErrorLike): boolean {
  const message = typeof e.message === "string" ? e.message : "";
  if (e.name === "ReplyError") return LOADING.test(message);
  if (typeof e.name === "string" && NAMES.has(e.name)) return true;
  if (typeof e.code === "string" && CODES.has(e.code)) return true;
  return MESSAGES.test(message);
}
