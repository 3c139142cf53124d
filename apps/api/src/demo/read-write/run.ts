import type { Context } from "../../context.js";
import type { ReadWriteDemoResult } from "../../types.js";
import { newRunId } from "../runs/registry.js";
import { HEARTBEAT_MS } from "../runs/run.js";
import { takeSlotOrRefuse } from "../runs/scenario-slot.js";
import { releaseScenarioSlot } from "../runs/slots.js";
import { playStory } from "./story.js";
import { judgeReadWrite } from "./verdict.js";

/** Longer than the story at full scale (about 2 s): a crashed instance's slot frees itself after it. */
const SLOT_LEASE_MS = HEARTBEAT_MS * 10;
/** Each actor's wait: long enough for the story, bounded so a broken lock ends the run with a verdict. */
const WAIT_MS = 5_000;

/**
 * Runs the read-write story on the real Redis (a lock `demo:read-write:<runId>` of its own) and answers its
 * timeline and the verdict judged from it. It counts as a scenario against MAX_SCENARIOS and
 * MAX_SCENARIOS_PER_CLIENT, and is cancelled when the instance shuts down.
 */
export async function runReadWriteDemo(
  ctx: Context,
  req: { timeScale: number },
): Promise<ReadWriteDemoResult> {
  const runId = newRunId();
  const client = ctx.clientAddress ?? "local";
  await takeSlotOrRefuse(ctx, client, runId, SLOT_LEASE_MS);
  const abort = new AbortController();
  ctx.runs.add(runId, { cancel: (reason) => abort.abort(new Error(reason)) });
  const resource = `demo:read-write:${runId}`;
  const lock = ctx.locks.readWrite(resource);
  const started = performance.now();
  try {
    const holds = await playStory(lock, { timeScale: req.timeScale, waitMs: WAIT_MS, signal: abort.signal });
    return {
      resource,
      key: `lock:rw:{${resource}}`,
      durationMs: Math.round(performance.now() - started),
      holds,
      verdict: judgeReadWrite(holds),
    };
  } finally {
    ctx.runs.remove(runId);
    await releaseScenarioSlot(ctx.redis, client, runId).catch(() => undefined);
  }
}
