import type { Page } from "@playwright/test";

export interface MainThreadTask {
  /** Wall time of the task, ms. */
  wallMs: number;
  /** CPU time the renderer's main thread spent on it, ms: unaffected by other processes on the machine. */
  cpuMs: number;
}

/**
 * Records the page's main-thread tasks while `during` runs, from a Chromium trace ("RunTask" events with
 * their thread time). On a shared machine a task's wall time stretches with the load; its CPU time does not,
 * so this tells a slow page from a busy machine.
 */
export async function traceMainThread(page: Page, during: () => Promise<void>): Promise<MainThreadTask[]> {
  const browser = page.context().browser();
  if (!browser) throw new Error("no browser to trace");
  // "toplevel" alone: RunTask events with their thread time, and little tracing overhead.
  await browser.startTracing(page, { categories: ["toplevel"] });
  let buffer: Buffer;
  try {
    await during();
  } finally {
    buffer = await browser.stopTracing();
  }
  const events = (JSON.parse(buffer.toString("utf8")) as { traceEvents: TraceEvent[] }).traceEvents;
  return mainThreadTasks(events);
}

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string };
}

/** The top-level task event, by the names Chromium versions have used. */
const TASK_NAMES = new Set(["RunTask", "ThreadControllerImpl::RunTask", "ThreadControllerImpl::DoWork"]);

function mainThreadTasks(events: TraceEvent[]): MainThreadTask[] {
  const mains = new Set(
    events
      .filter((e) => e.ph === "M" && e.name === "thread_name" && e.args?.name === "CrRendererMain")
      .map((e) => `${e.pid}:${e.tid}`),
  );
  const tasks = events
    .filter((e) => TASK_NAMES.has(e.name) && e.ph === "X" && mains.has(`${e.pid}:${e.tid}`))
    .map((e) => ({ wallMs: (e.dur ?? 0) / 1000, cpuMs: (e.tdur ?? e.dur ?? 0) / 1000 }));
  if (tasks.length === 0) {
    const names = [...new Set(events.map((e) => e.name))].slice(0, 40).join(", ");
    throw new Error(`the trace holds no main-thread tasks (event names: ${names})`);
  }
  return tasks;
}
