import { isRedisUnavailable } from "@lockyard/lock";
import { initTRPC, TRPCError } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { z } from "zod";
import type { Context } from "./context.js";
import { BurstRunningError } from "./demo/burst-running-error.js";
import { requestSignal } from "./http/request-signal.js";
import { ShuttingDownError } from "./lib/drain.js";
import { sameSecret } from "./lib/same-secret.js";

// `meta.openapi` exposes a procedure as a REST route (router/seed.ts, http/rest.ts).
const init = initTRPC.context<Context>().meta<OpenApiMeta>();
const t = init.create({
  // Never put stack traces into responses, whatever NODE_ENV says.
  isDev: false,
  errorFormatter({ shape, error, ctx }) {
    const invalid = error.cause instanceof z.ZodError ? error.cause : null;
    const zodError = invalid ? z.flattenError(invalid) : null;
    if (error.code === "INTERNAL_SERVER_ERROR") {
      if (isRedisUnavailable(error.cause)) {
        // Errors raised while a subscription streams bypass the middleware below.
        return {
          ...shape,
          code: -32_603,
          message: "Redis is unavailable; try again shortly",
          data: { ...shape.data, code: "SERVICE_UNAVAILABLE" as const, httpStatus: 503, zodError: null },
        };
      }
      ctx?.logger.error({ err: error.cause ?? error }, "internal error");
      return { ...shape, message: "Internal server error", data: { ...shape.data, zodError: null } };
    }
    // A refused burst names the run that holds the guard, so a client can watch it instead.
    const runId = error.cause instanceof BurstRunningError ? error.cause.runId : undefined;
    return {
      ...shape,
      // tRPC's own message for invalid input is the issues as pretty-printed JSON; they stay in `data`.
      message: invalid ? issuesMessage(invalid.issues) : shape.message,
      data: {
        ...shape.data,
        zodError,
        ...(invalid ? { issues: invalid.issues.map(issueView) } : {}),
        ...(runId ? { runId } : {}),
      },
    };
  },
  sse: {
    ping: { enabled: true, intervalMs: 2_000 },
    client: { reconnectAfterInactivityMs: 5_000 },
  },
});

/** One line a person can act on: `productId: expected string, received boolean; mode: …`. */
function issuesMessage(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((i) => `${i.path.length > 0 ? issuePath(i.path) : "input"}: ${i.message}`).join("; ");
}

function issuePath(path: readonly PropertyKey[]): string {
  return path.map(String).join(".");
}

function issueView(issue: z.core.$ZodIssue) {
  return { path: issue.path.map(String), code: issue.code, message: issue.message };
}

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Turns "Redis is down" into SERVICE_UNAVAILABLE so clients can retry instead of seeing a 500. */
const redisAvailability = t.middleware(async ({ next }) => {
  const result = await next();
  // Already SERVICE_UNAVAILABLE (PostgreSQL down, say): keep its message.
  if (!result.ok && result.error.code !== "SERVICE_UNAVAILABLE" && isRedisUnavailable(result.error.cause)) {
    throw new TRPCError({
      code: "SERVICE_UNAVAILABLE",
      message: "Redis is unavailable; try again shortly",
      cause: result.error.cause,
    });
  }
  return result;
});

/**
 * A call that fails because its client went away (the request's signal aborted) is no fault of the API: it is
 * logged at debug, not as an internal error, so clients that hang up cannot flood the error log.
 */
const clientGone = t.middleware(async ({ ctx, path, signal, next }) => {
  const result = await next();
  // A REST route gets no signal from trpc-to-openapi: rest.ts puts the request's on the context.
  const request = signal ?? requestSignal(ctx);
  if (!result.ok && result.error.code === "INTERNAL_SERVER_ERROR" && isAbortOf(request, result.error.cause)) {
    ctx.logger.debug({ path }, "client went away");
    throw new TRPCError({
      code: "CLIENT_CLOSED_REQUEST",
      message: "client went away",
      cause: result.error.cause,
    });
  }
  return result;
});

function isAbortOf(signal: AbortSignal | undefined, err: unknown): boolean {
  if (!signal?.aborted) return false;
  return err === signal.reason || (err instanceof Error && err.name === "AbortError");
}

/**
 * A call stopped by the instance's shutdown (lib/drain.ts; server.ts counts the requests in flight), or one
 * that comes after it, is a 503 saying to retry elsewhere, not an internal error.
 */
const draining = t.middleware(async ({ ctx, next }) => {
  if (ctx.drain.stopping) throw shuttingDown(ctx.config.instanceId, "before it started");
  const result = await next();
  if (!result.ok && result.error.cause instanceof ShuttingDownError) {
    throw shuttingDown(
      ctx.config.instanceId,
      "while it waited, before it wrote anything",
      result.error.cause,
    );
  }
  return result;
});

function shuttingDown(instanceId: string, when: string, cause?: Error): TRPCError {
  return new TRPCError({
    code: "SERVICE_UNAVAILABLE",
    message: `instance ${instanceId} is shutting down and stopped this call ${when}; try again (another instance serves it)`,
    ...(cause ? { cause } : {}),
  });
}

export const publicProcedure = t.procedure.use(clientGone).use(draining).use(redisAvailability);

/** True when the request may do admin things: ADMIN_TOKEN is unset (local demo) or it presented it. */
export function isAdmin(ctx: Pick<Context, "config" | "adminToken">): boolean {
  const expected = ctx.config.adminToken;
  return expected === undefined || sameSecret(ctx.adminToken, expected);
}

/** Mutations that reset state. Open when ADMIN_TOKEN is unset (local demo), guarded when it is. */
export const adminProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!isAdmin(ctx)) {
    throw new TRPCError({ code: "UNAUTHORIZED", message: "admin token required (x-admin-token header)" });
  }
  return next();
});
