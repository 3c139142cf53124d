import { anyCause, type ErrorLike, SOCKET_CODES } from "../core/unreachable.js";

const NAMES = new Set(["MaxRetriesPerRequestError", "ClusterAllFailedError", "ReplyLostError"]);
const MESSAGES =
  /connection is closed|stream isn't writeable|offline queue|enableofflinequeue|cluster isn't ready|command timed out|reached the max retries|connect etimedout|none of startup nodes|failed to refresh slots|too many cluster redirections/i;
// Redis answers LOADING while it reads its dataset after a restart: it ran nothing, and will serve soon.
const LOADING = /^LOADING\b/;

/**
 * True when Redis is unreachable right now rather than answering: a command failed without any reply
 * (socket closed or refused, offline queue off or flushed, retries exhausted, no Cluster node reachable, a
 * Cluster whose nodes redirected the command to each other until ioredis gave up: none of them ran it),
 * or Redis answered LOADING (restarting: the command did not run). A reply error (WRONGTYPE, NOSCRIPT…) is
 * Redis's answer and is not. Errors that wrap one of these in `cause` count too.
 */
export function isConnectionError(err: unknown): boolean {
  return anyCause(err, isUnavailable);
}

function isUnavailable(e: ErrorLike): boolean {
  const message = typeof e.message === "string" ? e.message : "";
  if (e.name === "ReplyError") return LOADING.test(message);
  if (typeof e.name === "string" && NAMES.has(e.name)) return true;
  if (typeof e.code === "string" && SOCKET_CODES.has(e.code)) return true;
  return MESSAGES.test(message);
}
