import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Cluster, type Redis } from "ioredis";
import { floor } from "../contenders/floor.js";
import type { ContenderFactory } from "../contenders/types.js";
import { Collector, target } from "../harness/collect.js";
import { commandStats, statsDelta } from "../harness/commandstats.js";
import { progress } from "../harness/progress.js";
import { repoPath } from "../harness/repo.js";
import { percentile, ratios, rotate, type Spread, spread } from "../harness/stats.js";
import { type Timeline, timeline } from "../harness/timeline.js";
import type { FromWorker, ToWorker, WorkerResult, WorkerSpec } from "./cross-process-worker.js";
import type { BenchContext, Row, ScenarioResult } from "./types.js";

const TASKS = 200;
const STOCK = 100;
const WORK_MS = 1;
const PROCESSES = [2, 4, 8] as const;
/** How long a phase (start-up and warm-up, the timed run, shutdown) may take before the scenario gives up. */
const PHASE_MS = 120_000;

const WORKER = fileURLToPath(new URL("./cross-process-worker.js", import.meta.url));

interface ClusterLib {
  startCluster(opts?: {
    masters?: number;
  }): Promise<{ nodes: { host: string; port: number }[]; stop(): Promise<void> }>;
}

export interface Config {
  lib: ContenderFactory;
  processes: number;
  cluster: boolean;
  /** Collector row; Cluster runs go into their Lockyard row's cluster* metrics. */
  row: string;
  /** Where the processes connect (default the bench's redis-server): (j) puts a delaying proxy there. */
  redisUrl?: string;
}

export interface RunOutcome {
  wallMs: number;
  /** max − min of the processes' finish times, as % of the wall. */
  finishSpreadPct: number;
  acquired: number;
  timeouts: number;
  errors: number;
  sold: number;
  finalStock: number;
  waits: number[];
  lockCalls: Record<string, number>;
  lockCallsTotal: number;
  settings: string;
  /** Set when the server's EVAL/EVALSHA count differs from what the processes counted sending. */
  scriptCheck?: string;
  /** Every process's holds on one clock: hold lengths and the handoff gaps, local and across processes. */
  timeline: Timeline;
  /** Mean time of the holds' first command (the GET). */
  meanReadMs: number;
}

/** Where the stock lives and how it is reset: the bench's redis-server, or the Cluster. */
export interface Store {
  flush(): Promise<void>;
  kv: Redis;
}

/**
 * (f) Scenario (c)'s deduction spread over P processes: `tasks` tasks on one key, each GET → 1 ms → SET stock−1
 * under the lock, from stock 100, split evenly over P forked processes with their own connections, started
 * together by a barrier. The floor is the same tasks behind an in-process FIFO in one process.
 */
export async function crossProcess(ctx: BenchContext): Promise<ScenarioResult> {
  const tasks = ctx.quick ? 48 : TASKS;
  const stock = ctx.quick ? 24 : STOCK;
  const rounds = ctx.quick ? 1 : ctx.rounds;
  const libs = [ctx.lockyard, ...ctx.peers];
  const configs: Config[] = [
    { lib: floor, processes: 1, cluster: false, row: "floor" },
    ...PROCESSES.flatMap((p) => [
      ...libs.map((lib) => ({ lib, processes: p, cluster: false, row: `${lib.id}@${p}` })),
      { lib: ctx.lockyard, processes: p, cluster: true, row: `${ctx.lockyard.id}@${p}` },
    ]),
  ];
  const clusterLib = (await import(repoPath("scripts/lib/cluster.mjs"))) as ClusterLib;
  const cluster = await clusterLib.startCluster({ masters: 3 });
  progress(`(f) cluster: 3 masters on ${cluster.nodes.map((n) => n.port).join(", ")}`);
  const clusterKv = new Cluster(cluster.nodes);
  await clusterKv.ping();
  const stores: Record<"single" | "cluster", Store> = {
    single: { flush: async () => void (await ctx.admin.flushall()), kv: ctx.admin },
    cluster: {
      flush: async () => void (await Promise.all(clusterKv.nodes("master").map((n) => n.flushall()))),
      kv: clusterKv as unknown as Redis,
    },
  };
  const col = new Collector();
  const settings: Record<string, string> = {};
  const notes: string[] = [];
  const unsafe: string[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const cfg of rotate(configs, round)) {
        const store = stores[cfg.cluster ? "cluster" : "single"];
        await store.flush();
        const out = await runOnce(ctx, cfg, store, cluster.nodes, tasks, stock);
        settings[cfg.cluster ? `${cfg.lib.id} (Cluster)` : cfg.lib.id] = out.settings;
        const acq = Math.max(1, out.acquired);
        const oversold = Math.max(0, out.sold - (stock - out.finalStock)) + Math.max(0, -out.finalStock);
        if (out.finalStock !== stock - out.sold || out.finalStock < 0)
          unsafe.push(
            `${cfg.lib.label} P = ${cfg.processes}${cfg.cluster ? " on the Cluster" : ""} round ${round}: final stock ${out.finalStock} after ${out.sold} sold from ${stock}.`,
          );
        if (out.timeline.overlaps > 0)
          unsafe.push(
            `${cfg.lib.label} P = ${cfg.processes}${cfg.cluster ? " on the Cluster" : ""} round ${round}: ${out.timeline.overlaps} holds began before the previous one ended.`,
          );
        if (out.scriptCheck)
          notes.push(`${cfg.lib.label} P = ${cfg.processes} round ${round}: ${out.scriptCheck}.`);
        if (out.errors > 0)
          notes.push(
            `${cfg.lib.label} P = ${cfg.processes}${cfg.cluster ? " (Cluster)" : ""} round ${round}: ${out.errors} acquire/release errors.`,
          );
        const prefix = cfg.cluster ? "cluster" : "";
        const key = (m: string) => (prefix ? `${prefix}${m[0]!.toUpperCase()}${m.slice(1)}` : m);
        col.add(cfg.row, key("wallMs"), out.wallMs);
        col.add(cfg.row, key("oversold"), oversold);
        col.add(cfg.row, key("timeouts"), out.timeouts);
        col.add(cfg.row, key("lockCallsPerAcq"), out.lockCallsTotal / acq);
        if (!cfg.cluster) {
          col.add(cfg.row, "processes", cfg.processes);
          col.add(cfg.row, "p50Wait", percentile(out.waits, 50));
          col.add(cfg.row, "p99Wait", percentile(out.waits, 99));
          col.add(cfg.row, "finishSpreadPct", out.finishSpreadPct);
          addTimeline(col, cfg.row, out);
        }
        if (round === 1 && cfg.lib.id !== floor.id)
          notes.push(
            `${cfg.lib.label} P = ${cfg.processes}${cfg.cluster ? " on the Cluster" : ""}, lock calls sent in round 1 (all processes): ${JSON.stringify(out.lockCalls)}.`,
          );
        progress(
          `(f) cross-process · ${cfg.lib.label}${cfg.cluster ? " on the Cluster" : ""} · P = ${cfg.processes} · round ${round}/${rounds}: ${out.wallMs.toFixed(0)} ms, spread ${out.finishSpreadPct.toFixed(0)} %, ${(out.lockCallsTotal / acq).toFixed(1)} lock calls/acq, ${out.timeouts} timeouts, stock ${out.finalStock}, oversold ${oversold}`,
        );
      }
    }
  } finally {
    clusterKv.disconnect();
    await cluster.stop();
  }

  const floorWall = col.values("floor", "wallMs");
  const rows: Row[] = [floorRow(col)];
  for (const p of PROCESSES) {
    const peerRows = ctx.peers.map((lib) => `${lib.id}@${p}`);
    for (const lib of libs) {
      const id = `${lib.id}@${p}`;
      const wall = col.values(id, "wallMs");
      const values: Record<string, Spread> = { ...col.spreads(id), xFloor: spread(ratios(wall, floorWall)) };
      const row: Row = { id, label: lib.label, values };
      if (lib === ctx.lockyard) {
        // Per round, the fastest peer at this P divided by Lockyard in the same round.
        const bestPeer = wall.map((_, i) => Math.min(...peerRows.map((r) => col.values(r, "wallMs")[i]!)));
        values.bestPeerX = spread(ratios(bestPeer, wall));
        values.clusterXSingle = spread(ratios(col.values(id, "clusterWallMs"), wall));
        row.targets = [
          target(`P = ${p}: wall ≤ 1.3× the single-process floor`, values.xFloor!.median, "<=", 1.3, "×"),
          target(`P = ${p}: ≤ 3 lock calls per acquisition`, values.lockCallsPerAcq!.median, "<=", 3),
          target(`P = ${p}: ≥ 3× faster than the best peer`, values.bestPeerX!.median, ">=", 3, "×"),
          target(
            `P = ${p}: per-process finish spread ≤ 20 % of wall`,
            values.finishSpreadPct!.median,
            "<=",
            20,
            " %",
          ),
        ];
      }
      rows.push(row);
    }
    const best = ctx.peers
      .map((lib) => ({ lib, wall: col.spreads(`${lib.id}@${p}`).wallMs?.median ?? Number.NaN }))
      .sort((a, b) => a.wall - b.wall)[0];
    if (best)
      notes.push(
        `P = ${p}: the fastest peer by median wall was ${best.lib.label} (${best.wall.toFixed(0)} ms); a peer's wall ends early when its tasks give up (timeouts).`,
      );
  }
  const clusterOversold = PROCESSES.map(
    (p) => col.spreads(`${ctx.lockyard.id}@${p}`).clusterOversold?.max ?? 0,
  );
  const clusterTimeouts = PROCESSES.map(
    (p) => col.spreads(`${ctx.lockyard.id}@${p}`).clusterTimeouts?.max ?? 0,
  );
  const clusterCalls = PROCESSES.map((p) =>
    (col.spreads(`${ctx.lockyard.id}@${p}`).clusterLockCallsPerAcq?.median ?? Number.NaN).toFixed(2),
  );
  notes.unshift(
    `Lockyard on the 3-master Cluster at P = ${PROCESSES.join(", ")}: oversold ${clusterOversold.join(", ")} and timeouts ${clusterTimeouts.join(", ")} (worst run), ${clusterCalls.join(", ")} lock calls per acquisition (median; counted on the lock's Cluster client, whose sharded subscriber's SSUBSCRIBE/SUNSUBSCRIBE the counter does not see).`,
  );
  for (const p of PROCESSES) {
    const line = whereTheTimeGoes(col, `${ctx.lockyard.id}@${p}`, p);
    if (line) notes.unshift(line);
  }
  if (ctx.quick) notes.unshift(`--quick: ${tasks} tasks from stock ${stock}, one round.`);
  if (unsafe.length)
    notes.unshift(
      `**Not exclusive (final stock ≠ ${stock} − sold, or overlapping holds):** ${unsafe.join(" ")}`,
    );
  return {
    id: "f",
    title: `(f) Contended across processes: ${tasks} tasks on one key split over P = ${PROCESSES.join(", ")} processes, GET → ${WORK_MS} ms → SET stock−1, from stock ${stock}`,
    columns: [
      { key: "processes", header: "processes", digits: 0 },
      { key: "wallMs", header: "wall ms", digits: 0 },
      { key: "xFloor", header: "× floor", digits: 2 },
      { key: "lockCallsPerAcq", header: "lock calls/acq", digits: 2 },
      { key: "p50Wait", header: "p50 wait ms", digits: 0 },
      { key: "p99Wait", header: "p99 wait ms", digits: 0 },
      { key: "finishSpreadPct", header: "finish spread % of wall", digits: 0 },
      { key: "timeouts", header: "timeouts", digits: 0 },
      { key: "oversold", header: "oversold", digits: 0 },
      { key: "bestPeerX", header: "best peer wall ÷ Lockyard", digits: 2 },
      { key: "meanHoldMs", header: "mean hold ms", digits: 2 },
      { key: "localGapP50Ms", header: "handoff within a process: p50 gap ms", digits: 2 },
      { key: "crossGaps", header: "handoffs to another process", digits: 0 },
      { key: "crossGapP50Ms", header: "… p50 gap ms", digits: 2 },
      { key: "overlaps", header: "overlapping holds", digits: 0 },
      { key: "clusterWallMs", header: "Cluster: wall ms", digits: 0 },
      { key: "clusterXSingle", header: "Cluster ÷ one Redis", digits: 2 },
    ],
    rows,
    settings,
    notes,
  };
}

function addTimeline(col: Collector, row: string, out: RunOutcome): void {
  const t = out.timeline;
  col.add(row, "meanHoldMs", t.meanHoldMs);
  col.add(row, "meanReadMs", out.meanReadMs);
  col.add(row, "holdSumMs", t.meanHoldMs * t.holds);
  col.add(row, "localGapSumMs", t.localGapSumMs);
  col.add(row, "crossGapSumMs", t.crossGapSumMs);
  col.add(row, "crossGaps", t.crossGaps);
  col.add(row, "overlaps", t.overlaps);
  if (t.localGaps > 0) col.add(row, "localGapP50Ms", t.localGapP50Ms);
  if (t.crossGaps > 0) col.add(row, "crossGapP50Ms", t.crossGapP50Ms);
}

/**
 * Lockyard's wall above the floor's, split by the timelines of the same rounds: longer holds, handoffs within
 * a process, handoffs to another process, and the rest (first grant after the barrier, last report after the
 * last hold). Medians over rounds, so the parts need not add up exactly.
 */
function whereTheTimeGoes(col: Collector, row: string, p: number): string | null {
  const perRound = (metric: string) => differences(col.values(row, metric), col.values("floor", metric));
  const wall = perRound("wallMs");
  if (wall.length === 0) return null;
  const holds = perRound("holdSumMs");
  const local = perRound("localGapSumMs");
  const cross = col.values(row, "crossGapSumMs");
  const rest = wall.map((w, i) => w - (holds[i] ?? 0) - (local[i] ?? 0) - (cross[i] ?? 0));
  const ms = (xs: number[]) =>
    `${spread(xs).median >= 0 ? "+" : "−"}${Math.abs(spread(xs).median).toFixed(0)} ms`;
  const med = (metric: string, r = row) => spread(col.values(r, metric)).median;
  return (
    `P = ${p}, where Lockyard's time above the floor goes (medians over rounds): wall ${ms(wall)} = ` +
    `holds ${ms(holds)} (mean hold ${med("meanHoldMs").toFixed(2)} ms vs the floor's ${med("meanHoldMs", "floor").toFixed(2)}; ` +
    `its first command, the GET, ${med("meanReadMs").toFixed(2)} ms vs ${med("meanReadMs", "floor").toFixed(2)}) ` +
    `+ handoffs within a process ${ms(local)} (p50 gap ${med("localGapP50Ms").toFixed(2)} ms vs the floor's ${med("localGapP50Ms", "floor").toFixed(2)}) ` +
    `+ ${med("crossGaps").toFixed(0)} handoffs to another process ${ms(cross)} (p50 gap ${med("crossGapP50Ms").toFixed(2)} ms) ` +
    `+ start and finish ${ms(rest)}.`
  );
}

const mean = (xs: number[]) => {
  const finite = xs.filter(Number.isFinite);
  return finite.length ? finite.reduce((a, x) => a + x, 0) / finite.length : Number.NaN;
};

/** a[i] − b[i] per round. */
function differences(a: number[], b: number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) out.push(a[i]! - b[i]!);
  return out;
}

/** The floor's row: its figures, and × floor (1 in every round) so the column reads the same for every row. */
export function floorRow(col: Collector): Row {
  const wall = col.values("floor", "wallMs");
  return {
    id: "floor",
    label: "in-process floor, one process",
    values: { ...col.spreads("floor"), xFloor: spread(ratios(wall, wall)) },
  };
}

/**
 * One timed run: P processes forked, each with its share of the tasks and its own connections, warmed up;
 * the parent starts them together once all are ready and times the run on its own clock, from "go" to each
 * process's "done".
 */
export async function runOnce(
  ctx: BenchContext,
  cfg: Config,
  store: Store,
  clusterNodes: { host: string; port: number }[],
  tasks: number,
  stock: number,
): Promise<RunOutcome> {
  const key = "f:stock";
  const stockKey = "f:stock-qty";
  const children: ChildProcess[] = [];
  const inboxes: FromWorker[][] = [];
  const waiters: (((m: FromWorker) => void) | null)[] = [];
  const exited: Promise<number | null>[] = [];
  const receive = (i: number): Promise<FromWorker> =>
    new Promise((resolve, reject) => {
      const m = inboxes[i]!.shift();
      if (m) return resolve(m);
      const timer = setTimeout(
        () => reject(new Error(`(f) process ${i} sent nothing in ${PHASE_MS} ms`)),
        PHASE_MS,
      );
      waiters[i] = (msg) => {
        clearTimeout(timer);
        resolve(msg);
      };
    });
  const expect = async <T extends FromWorker["type"]>(i: number, type: T) => {
    const m = await receive(i);
    if (m.type === "error") throw new Error(`(f) process ${i} (${cfg.lib.id}) failed: ${m.message}`);
    if (m.type !== type) throw new Error(`(f) process ${i}: expected "${type}", got "${m.type}"`);
    return m as Extract<FromWorker, { type: T }>;
  };
  const tell = (i: number, m: ToWorker) => children[i]!.send(m);
  try {
    for (let i = 0; i < cfg.processes; i++) {
      const child = fork(WORKER, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
      children.push(child);
      inboxes.push([]);
      waiters.push(null);
      exited.push(new Promise((resolve) => child.once("exit", (code) => resolve(code))));
      child.on("message", (m: FromWorker) => {
        const w = waiters[i];
        if (w) {
          waiters[i] = null;
          w(m);
        } else inboxes[i]!.push(m);
      });
      child.once("exit", (code, signal) => {
        if (code === 0) return;
        const m: FromWorker = { type: "error", message: `exited with ${signal ?? `code ${code}`}` };
        const w = waiters[i];
        if (w) {
          waiters[i] = null;
          w(m);
        } else inboxes[i]!.push(m);
      });
      // Evenly: the first (tasks mod P) processes take one task more.
      const share = Math.floor(tasks / cfg.processes) + (i < tasks % cfg.processes ? 1 : 0);
      const spec: WorkerSpec = {
        lib: cfg.lib.id,
        redisUrl: cfg.redisUrl ?? ctx.redisUrl,
        ...(cfg.cluster ? { clusterNodes } : {}),
        index: i,
        tasks: share,
        key,
        stockKey,
        workMs: WORK_MS,
      };
      tell(i, { type: "spec", spec });
    }
    const ready = await Promise.all(children.map((_, i) => expect(i, "ready")));
    await store.kv.set(stockKey, stock);
    const stats0 = cfg.cluster ? null : await commandStats(ctx.admin);
    // The barrier: every process is connected and warmed up; all start now.
    const finished: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < children.length; i++) tell(i, { type: "go" });
    const results: WorkerResult[] = await Promise.all(
      children.map(async (_, i) => {
        const { result } = await expect(i, "done");
        finished[i] = performance.now() - t0;
        return result;
      }),
    );
    const stats1 = cfg.cluster ? null : await commandStats(ctx.admin);
    const finalStock = Number(await store.kv.get(stockKey));
    for (let i = 0; i < children.length; i++) tell(i, { type: "close" });
    await Promise.all(children.map((_, i) => expect(i, "closed")));
    await Promise.all(exited);

    const wallMs = Math.max(...finished);
    const lockCalls: Record<string, number> = {};
    let scriptCheck: string | undefined;
    for (const r of results)
      for (const [cmd, n] of Object.entries(r.lockCalls)) lockCalls[cmd] = (lockCalls[cmd] ?? 0) + n;
    if (stats0 && stats1) {
      const server = statsDelta(stats0, stats1);
      const scripts = (server.evalsha ?? 0) + (server.eval ?? 0);
      const sent = (lockCalls.evalsha ?? 0) + (lockCalls.eval ?? 0);
      if (scripts !== sent)
        scriptCheck = `commandstats EVAL/EVALSHA ${scripts} ≠ ${sent} sent by the processes`;
    }
    const sum = (f: (r: WorkerResult) => number) => results.reduce((a, r) => a + f(r), 0);
    return {
      wallMs,
      finishSpreadPct: ((Math.max(...finished) - Math.min(...finished)) / wallMs) * 100,
      acquired: sum((r) => r.acquired),
      timeouts: sum((r) => r.timeouts),
      errors: sum((r) => r.errors),
      sold: sum((r) => r.decrements),
      finalStock,
      waits: results.flatMap((r) => r.waits),
      lockCalls,
      lockCallsTotal: sum((r) => r.lockCallsTotal),
      settings: ready[0]!.settings,
      ...(scriptCheck ? { scriptCheck } : {}),
      timeline: timeline(results.map((r) => r.holds)),
      meanReadMs: mean(results.flatMap((r) => r.readMs)),
    };
  } finally {
    // Only the processes this run forked, and only those still running (after an error).
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill();
  }
}
