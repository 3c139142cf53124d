/**
 * True when an error means "PostgreSQL is unreachable right now" rather than a bug: the pool could not
 * connect, the connection died, a query timed out, or the server is shutting down or starting up.
 */
export function isPgUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") {
      if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND)$/.test(code)) return true;
      // SQLSTATE class 08 (connection exception); 57P01-57P03 (shutdown, crash, not accepting yet); 53300.
      if (/^(08...|57P0[1-3]|53300)$/.test(code)) return true;
    }
    if (
      /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|Cannot use a pool after calling end/.test(
        e.message,
      )
    ) {
      return true;
    }
  }
  return false;
}
