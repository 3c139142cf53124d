import { fileURLToPath } from "node:url";
import type { SemaphoreFactory, SemaphoreOptions } from "../contenders/semaphore/types.js";
import { commandStats, statsDelta, sum } from "../harness/commandstats.js";
import { callsDelta, clientCalls } from "../harness/connections.js";
import { Forked } from "../harness/forked.js";
import { contendForPermits, type PermitShare, permitShare } from "./permit-once.js";
import type {
  FromSemaphoreWorker,
  SemaphoreWorkerResult,
  SemaphoreWorkerSpec,
  ToSemaphoreWorker,
} from "./semaphore-worker.js";
import type { BenchContext } from "./types.js";

const KEY = "i:permits";
const GAUGE = "i:holders";
/** How long a phase (start-up and warm-up, the timed run, shutdown) of a forked process may take. */
const PHASE_MS = 120_000;
const WORKER = fileURLToPath(new URL("./semaphore-worker.js", import.meta.url));

export interface SemaphoreRunConfig {
  lib: SemaphoreFactory;
  options: SemaphoreOptions;
  /** 1: every task in the bench process; more: split evenly over that many forked processes. */
  processes: number;
  tasks: number;
  workMs: number;
}

/** One timed run: what the tasks did, timed on the bench's clock, and what it cost Redis. */
export interface SemaphoreRun extends PermitShare {
  wallMs: number;
  lockCalls: { total: number; byCommand: Record<string, number> };
  /** Commands Redis ran during the run, those inside scripts included, the work's own left out. */
  serverCmds: number;
  /** Set when the server's EVAL/EVALSHA count differs from what the library's connections sent. */
  scriptCheck?: string;
  settings: string;
}

export function runSemaphore(ctx: BenchContext, cfg: SemaphoreRunConfig): Promise<SemaphoreRun> {
  return cfg.processes === 1 ? runInProcess(ctx, cfg) : runAcrossProcesses(ctx, cfg);
}

async function runInProcess(ctx: BenchContext, cfg: SemaphoreRunConfig): Promise<SemaphoreRun> {
  const c = await cfg.lib.create(ctx.redisUrl, cfg.options);
  try {
    // Warm-up on another key: scripts loaded, JIT warm, a subscriber connection opened where there is one.
    await permitShare(c, ctx.work, {
      key: "i:warm",
      gaugeKey: "i:warm-holders",
      workMs: cfg.workMs,
      tasks: 20,
    });
    const lib0 = clientCalls(`lib-${cfg.lib.id}`);
    const work0 = clientCalls("bench-work");
    const stats0 = await commandStats(ctx.admin);
    const out = await contendForPermits(c, ctx.work, {
      key: KEY,
      gaugeKey: GAUGE,
      workMs: cfg.workMs,
      tasks: cfg.tasks,
    });
    const stats1 = await commandStats(ctx.admin);
    const lockCalls = callsDelta(lib0, clientCalls(`lib-${cfg.lib.id}`));
    const workCalls = callsDelta(work0, clientCalls("bench-work")).total;
    return { ...out, ...serverSide(statsDelta(stats0, stats1), lockCalls, workCalls), settings: c.settings };
  } finally {
    await c.close();
  }
}

/**
 * The tasks split evenly over forked processes with their own connections, warmed up, then started together
 * (the barrier); timed by the parent from "go" to the last process's "done".
 */
async function runAcrossProcesses(ctx: BenchContext, cfg: SemaphoreRunConfig): Promise<SemaphoreRun> {
  const workers = Array.from(
    { length: cfg.processes },
    (_, i) => new Forked<ToSemaphoreWorker, FromSemaphoreWorker>(WORKER, `(i) process ${i}`, PHASE_MS),
  );
  try {
    workers.forEach((w, i) => {
      const spec: SemaphoreWorkerSpec = {
        lib: cfg.lib.id,
        redisUrl: ctx.redisUrl,
        options: cfg.options,
        index: i,
        tasks: Math.floor(cfg.tasks / cfg.processes) + (i < cfg.tasks % cfg.processes ? 1 : 0),
        key: KEY,
        gaugeKey: GAUGE,
        workMs: cfg.workMs,
      };
      w.send({ type: "spec", spec });
    });
    const ready = await Promise.all(workers.map((w) => w.expect("ready")));
    await ctx.work.set(GAUGE, 0);
    const stats0 = await commandStats(ctx.admin);
    const t0 = performance.now();
    for (const w of workers) w.send({ type: "go" });
    const finished: number[] = [];
    const results: SemaphoreWorkerResult[] = await Promise.all(
      workers.map(async (w) => {
        const { result } = await w.expect("done");
        finished.push(performance.now() - t0);
        return result;
      }),
    );
    const stats1 = await commandStats(ctx.admin);
    for (const w of workers) w.send({ type: "close" });
    await Promise.all(workers.map((w) => w.expect("closed")));
    await Promise.all(workers.map((w) => w.exited));
    const lockCalls = { total: 0, byCommand: {} as Record<string, number> };
    for (const r of results) {
      lockCalls.total += r.lockCalls.total;
      for (const [cmd, n] of Object.entries(r.lockCalls.byCommand))
        lockCalls.byCommand[cmd] = (lockCalls.byCommand[cmd] ?? 0) + n;
    }
    const total = (f: (r: SemaphoreWorkerResult) => number) => results.reduce((a, r) => a + f(r), 0);
    const workCalls = total((r) => r.workCalls);
    return {
      wallMs: Math.max(...finished),
      acquired: total((r) => r.share.acquired),
      timeouts: total((r) => r.share.timeouts),
      errors: total((r) => r.share.errors),
      mostHolders: Math.max(...results.map((r) => r.share.mostHolders)),
      heldMs: total((r) => r.share.heldMs),
      waits: results.flatMap((r) => r.share.waits),
      ...serverSide(statsDelta(stats0, stats1), lockCalls, workCalls),
      settings: ready[0]!.settings,
    };
  } finally {
    for (const w of workers) w.stop();
  }
}

/** The server's count of the run's commands less the work's, and whether its script calls match the sent ones. */
function serverSide(
  server: Record<string, number>,
  lockCalls: SemaphoreRun["lockCalls"],
  workCalls: number,
): Pick<SemaphoreRun, "lockCalls" | "serverCmds" | "scriptCheck"> {
  const scripts = (server.evalsha ?? 0) + (server.eval ?? 0);
  const sent = (lockCalls.byCommand.evalsha ?? 0) + (lockCalls.byCommand.eval ?? 0);
  return {
    lockCalls,
    serverCmds: sum(server) - workCalls,
    ...(scripts !== sent ? { scriptCheck: `commandstats EVAL/EVALSHA ${scripts} ≠ ${sent} sent` } : {}),
  };
}
