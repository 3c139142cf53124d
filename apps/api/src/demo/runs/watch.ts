import { TRPCError, tracked } from "@trpc/server";
import type { Context } from "../../context.js";
import type { RunEvent } from "../../types.js";
import { readRunEvents, readRunMeta } from "./store.js";

/** A watcher of a run executing on this instance wakes on each event; this is only a safety net. */
const LOCAL_POLL_MS = 1_000;
/** A watcher of a run executing on another instance reads Redis this often. */
const REMOTE_POLL_MS = 200;
/** A running run whose instance has not beaten its heart for this long is reported as failed. */
const STALE_AFTER_MS = 10_000;

const isTerminal = (e: RunEvent) => e.type === "report" || e.type === "done" || e.type === "failed";

/**
 * The events of a run as tracked events, from `lastEventId + 1` on, ending after the terminal event. It only
 * reads: a reconnect resumes where it left off and never starts anything. A finished run replays from Redis
 * on any instance for as long as its events are kept.
 */
export async function* watchRun(
  ctx: Context,
  runId: string,
  lastEventId: string | null | undefined,
  signal: AbortSignal | undefined,
) {
  let next = lastEventId === null || lastEventId === undefined ? 0 : Number(lastEventId) + 1;
  const meta = await readRunMeta(ctx.redis, runId);
  if (!meta) throw new TRPCError({ code: "NOT_FOUND", message: `no demo run ${runId} (unknown or expired)` });
  while (!signal?.aborted) {
    // Register for the wake-up before reading, so an event stored in between is not missed.
    const local = ctx.runs.isLocal(runId);
    const woken = ctx.runs.wait(runId, local ? LOCAL_POLL_MS : REMOTE_POLL_MS, signal);
    const events = await readRunEvents(ctx.redis, runId, next);
    if (yield* numbered(events, next)) return;
    next += events.length;
    if (events.length === 0) {
      const now = await readRunMeta(ctx.redis, runId);
      if (now?.status === "finished") {
        // Every event is stored before the run is marked finished, so this read is the last there can be. A
        // client that has them all (its lastEventId at or past the last one) is done, not kept until the expiry.
        yield* numbered(await readRunEvents(ctx.redis, runId, next), next);
        return;
      }
      if (!local && (!now || Date.now() - now.heartbeatAt > STALE_AFTER_MS)) {
        const failed: RunEvent = { type: "failed", message: "the instance running this run stopped" };
        yield tracked(String(next), failed);
        return;
      }
    }
    await woken;
  }
}

/** Yields `events` as tracked events numbered from `first`; true when the run's terminal event was among them. */
function* numbered(events: RunEvent[], first: number) {
  for (const [i, event] of events.entries()) {
    yield tracked(String(first + i), event);
    if (isTerminal(event)) return true;
  }
  return false;
}
