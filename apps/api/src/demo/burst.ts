import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import { resetStock } from "../stock/store.js";
import type { RunEvent } from "../types.js";
import { type BurstRequest, fireBurst } from "./burst-fire.js";
import { BurstRunningError } from "./burst-running-error.js";
import { assertDemoProduct } from "./products.js";
import { acquireBurstGuard, releaseBurstGuard, renewBurstGuard } from "./runs/guard.js";
import { newRunId } from "./runs/registry.js";
import { RunLog } from "./runs/run.js";
import { createRunMeta } from "./runs/store.js";

/** The guard's lease; the run's heartbeat renews it, so it outlives a long burst but not a dead instance. */
const GUARD_LEASE_MS = 10_000;

/**
 * Starts a burst and returns its run id at once; the burst runs on this instance whether or not anybody
 * watches. One burst at a time across every instance: the guard is held until every request of the run has
 * settled, also when the run is cancelled, so a later burst never shares the product with a previous one.
 */
export async function startBurst(ctx: Context, req: BurstRequest): Promise<{ runId: string }> {
  assertDemoProduct(ctx.config, req.productId);
  if (req.mode === "redlock" && !ctx.redlock) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: `mode "redlock" is unavailable: ${ctx.redlockReason}`,
    });
  }
  if (req.mode === "postgres" && !ctx.postgres) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: `mode "postgres" is unavailable: ${ctx.postgresReason}`,
    });
  }
  if (ctx.config.apiUrls.length === 0) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: "no API_URLS configured for the burst" });
  }
  const runId = newRunId();
  const holder = await acquireBurstGuard(ctx.redis, runId, GUARD_LEASE_MS);
  if (holder !== null) {
    const cause = new BurstRunningError(holder);
    throw new TRPCError({ code: "CONFLICT", message: cause.message, cause });
  }
  try {
    await createRunMeta(
      ctx.redis,
      runId,
      { kind: "burst", instanceId: ctx.config.instanceId },
      ctx.config.runRetentionS,
    );
    await resetStock(ctx.redis, req.productId, req.initialStock);
  } catch (err) {
    await releaseBurstGuard(ctx.redis, runId).catch(() => undefined);
    throw err;
  }
  const cancel = new AbortController();
  const log = new RunLog({
    redis: ctx.redis,
    logger: ctx.logger,
    runId,
    retentionS: ctx.config.runRetentionS,
    onHeartbeat: async () => {
      await renewBurstGuard(ctx.redis, runId, GUARD_LEASE_MS);
    },
    onCancelRequested: () => cancel.abort(new Error("cancelled")),
    onAppend: () => ctx.runs.notify(runId),
  });
  ctx.runs.add(runId, { cancel: (reason) => cancel.abort(new Error(reason)) });
  void (async () => {
    let last: RunEvent;
    try {
      last = await fireBurst(ctx, req, log, cancel.signal);
    } catch (err) {
      ctx.logger.warn({ err, runId }, "burst failed");
      last = { type: "failed", message: err instanceof Error ? err.message : String(err) };
    }
    // Every request has settled: free the guard before the last event, so a watcher that starts the
    // next burst on seeing the report is not refused.
    await releaseBurstGuard(ctx.redis, runId).catch((err: unknown) =>
      ctx.logger.warn({ err, runId }, "burst guard release failed"),
    );
    await log.end(last);
    ctx.runs.remove(runId);
  })();
  return { runId };
}
