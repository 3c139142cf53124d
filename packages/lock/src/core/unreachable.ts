/** Socket errors of a call that got no answer: the store was unreachable, or the link died under the call. */
export const SOCKET_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTCONN",
  "EHOSTUNREACH",
]);

export interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
}

/** How deep a wrapped error (`cause`) is looked into: the library and the API wrap at most twice. */
const CAUSE_DEPTH = 5;

/** True when `err`, or an error it wraps in `cause`, passes `test`. */
export function anyCause(err: unknown, test: (e: ErrorLike) => boolean): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < CAUSE_DEPTH && typeof e === "object" && e !== null; depth++) {
    if (test(e as ErrorLike)) return true;
    e = (e as ErrorLike).cause;
  }
  return false;
}
