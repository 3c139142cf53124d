import type { Context } from "../context.js";
import type { ScenarioName } from "../schemas.js";
import type { ScenarioEvent } from "../types.js";
import { newRunId } from "./runs/registry.js";
import { HEARTBEAT_MS, RunLog } from "./runs/run.js";
import { takeSlotOrRefuse } from "./runs/scenario-slot.js";
import { releaseScenarioSlot, renewScenarioSlot } from "./runs/slots.js";
import { createRunMeta } from "./runs/store.js";
import { crash } from "./scenarios/crash.js";
import { fencing } from "./scenarios/fencing.js";
import { misdelete } from "./scenarios/misdelete.js";
import { reentrancy } from "./scenarios/reentrancy.js";
import type { ScenarioScript } from "./scenarios/types.js";
import { watchdog } from "./scenarios/watchdog.js";
import { Timeline } from "./timeline.js";

const scripts: Record<ScenarioName, ScenarioScript> = { watchdog, reentrancy, misdelete, fencing, crash };

/** A slot outlives a few missed heartbeats; a crashed instance's slots free themselves after it. */
const SLOT_LEASE_MS = HEARTBEAT_MS * 10;

/**
 * Starts a scenario and returns its run id at once. Scenarios fork child processes, so at most
 * MAX_SCENARIOS run at a time across every instance and MAX_SCENARIOS_PER_CLIENT per client address;
 * beyond that, TOO_MANY_REQUESTS.
 */
export async function startScenario(
  ctx: Context,
  req: { name: ScenarioName; timeScale: number },
): Promise<{ runId: string }> {
  const runId = newRunId();
  const client = ctx.clientAddress ?? "local";
  await takeSlotOrRefuse(ctx, client, runId, SLOT_LEASE_MS);
  const free = () => releaseScenarioSlot(ctx.redis, client, runId).catch(() => undefined);
  try {
    await createRunMeta(
      ctx.redis,
      runId,
      { kind: "scenario", instanceId: ctx.config.instanceId },
      ctx.config.runRetentionS,
    );
  } catch (err) {
    await free();
    throw err;
  }
  const abort = new AbortController();
  const log = new RunLog({
    redis: ctx.redis,
    logger: ctx.logger,
    runId,
    retentionS: ctx.config.runRetentionS,
    onHeartbeat: () => renewScenarioSlot(ctx.redis, client, runId, SLOT_LEASE_MS),
    onCancelRequested: () => abort.abort(new Error("cancelled")),
    onAppend: () => ctx.runs.notify(runId),
  });
  ctx.runs.add(runId, { cancel: (reason) => abort.abort(new Error(reason)) });
  let last: ScenarioEvent | undefined;
  const tl = new Timeline(ctx, runId, req.name, req.timeScale, abort.signal, (e) => {
    if (e.type === "done") last = e;
    else void log.emit(e);
  });
  void (async () => {
    try {
      const r = await scripts[req.name](tl);
      await tl.finish(r.ok, r.summary);
    } catch (err) {
      const message = abort.signal.aborted ? "cancelled" : err instanceof Error ? err.message : String(err);
      if (!abort.signal.aborted) {
        ctx.logger.warn({ err, scenario: req.name }, "scenario failed");
        await tl.emit("system", "error", message);
      }
      await tl.finish(false, message);
    } finally {
      abort.abort();
      await free();
      await log.end(last ?? { type: "failed", message: "the scenario ended without a result" });
      ctx.runs.remove(runId);
    }
  })();
  return { runId };
}
