import { isTrackedEnvelope } from "@trpc/server";
import type { createCaller } from "../src/root.js";
import type { RunEvent } from "../src/types.js";

type Caller = ReturnType<typeof createCaller>;

/** Watches a run through the caller to its end: the events with their tracked ids. */
export async function watchAll(
  caller: Caller,
  runId: string,
  lastEventId?: string,
): Promise<{ id: string; event: RunEvent }[]> {
  const out: { id: string; event: RunEvent }[] = [];
  const stream = await caller.demo.runs.watch({ runId, ...(lastEventId ? { lastEventId } : {}) });
  for await (const item of stream as AsyncIterable<unknown>) {
    if (!isTrackedEnvelope<RunEvent>(item)) throw new Error("untracked run event");
    out.push({ id: item[0], event: item[1] });
  }
  return out;
}
