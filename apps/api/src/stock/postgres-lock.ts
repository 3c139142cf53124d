import type { LockHandle } from "@lockyard/lock";
import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import { isPgUnavailable } from "../lib/pg-errors.js";

/** The `postgres` mode's guard: the lock lives in PostgreSQL, the stock it guards stays in Redis. */
export async function withPgLock<T>(
  ctx: Context,
  resource: string,
  waitMs: number,
  fn: (lock: LockHandle) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const pg = ctx.postgres;
  if (!pg) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: `mode "postgres" is unavailable on this instance: ${ctx.postgresReason}`,
    });
  }
  let lock: LockHandle;
  try {
    lock = await pg.locks.acquire(resource, { waitMs, ...(signal ? { signal } : {}) });
  } catch (err) {
    if (!isPgUnavailable(err)) throw err;
    throw new TRPCError({
      code: "SERVICE_UNAVAILABLE",
      message: "PostgreSQL is unavailable; try again shortly",
      cause: err,
    });
  }
  try {
    return await fn(lock);
  } finally {
    // Not withLock: once the write is done, a release PostgreSQL cannot answer must not turn the sale
    // into an error. The row frees itself at the end of its lease.
    await lock
      .release()
      .catch((err: unknown) => ctx.logger.warn({ err, resource }, "postgres release failed"));
  }
}
