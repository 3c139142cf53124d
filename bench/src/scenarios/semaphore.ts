import { semaphoreFloor } from "../contenders/semaphore/floor.js";
import { lockyardSemaphore } from "../contenders/semaphore/lockyard.js";
import { redisSemaphoreSemaphore } from "../contenders/semaphore/redis-semaphore.js";
import type { SemaphoreFactory, SemaphoreOptions } from "../contenders/semaphore/types.js";
import { Collector, target } from "../harness/collect.js";
import { progress } from "../harness/progress.js";
import { percentile, ratios, rotate, type Spread, spread } from "../harness/stats.js";
import { runSemaphore } from "./semaphore-runs.js";
import type { BenchContext, Row, ScenarioResult, TargetResult } from "./types.js";

const TASKS = 200;
const PERMITS = 4;
const WORK_MS = 2;
/** The wait with recommended settings: generous, so a slow semaphore shows as wall time, not as timeouts. */
const WAIT_MS = 30_000;
/** The seed design's wait, with its 100 ms retry. */
const SEED_WAIT_MS = 5_000;
/** The cross-process rows split the same tasks over this many forked processes. */
const PROCESSES = 2;

interface Config {
  lib: SemaphoreFactory;
  options: SemaphoreOptions;
  processes: number;
  row: string;
}

const LIBS = [lockyardSemaphore, redisSemaphoreSemaphore];
const recommended: SemaphoreOptions = { profile: "recommended", permits: PERMITS, waitMs: WAIT_MS };
const seed: SemaphoreOptions = { profile: "seed", permits: PERMITS, waitMs: SEED_WAIT_MS };

const CONFIGS: Config[] = [
  { lib: semaphoreFloor, options: recommended, processes: 1, row: "floor" },
  ...LIBS.map((lib) => ({ lib, options: recommended, processes: 1, row: `${lib.id}@recommended` })),
  ...LIBS.map((lib) => ({ lib, options: seed, processes: 1, row: `${lib.id}@seed` })),
  ...LIBS.map((lib) => ({ lib, options: recommended, processes: PROCESSES, row: `${lib.id}@P${PROCESSES}` })),
];

/**
 * (i) `tasks` tasks each take one permit of a 4-permit semaphore on one key, all started at once, and hold it
 * for INCR holders → 2 ms → DECR holders on the work connection. The INCR's answer is how many hold a permit
 * right then, as Redis counts them (above 4 is a broken semaphore). The floor is the same tasks behind an
 * in-process FIFO counting semaphore; the P2 rows split the tasks over two forked processes.
 */
export async function semaphore(ctx: BenchContext): Promise<ScenarioResult> {
  const tasks = ctx.quick ? 50 : TASKS;
  const col = new Collector();
  const settings: Record<string, string> = {};
  const notes: string[] = [];
  const broken: string[] = [];
  for (let round = 1; round <= ctx.rounds; round++) {
    for (const cfg of rotate(CONFIGS, round)) {
      await ctx.admin.flushall();
      const out = await runSemaphore(ctx, { ...cfg, tasks, workMs: WORK_MS });
      settings[cfg.row] =
        cfg.processes > 1 ? `${out.settings}; in each of ${cfg.processes} processes` : out.settings;
      const acq = Math.max(1, out.acquired);
      col.add(cfg.row, "processes", cfg.processes);
      col.add(cfg.row, "wallMs", out.wallMs);
      col.add(cfg.row, "meanHolders", out.heldMs / out.wallMs);
      col.add(cfg.row, "mostHolders", out.mostHolders);
      col.add(cfg.row, "timeouts", out.timeouts);
      col.add(cfg.row, "errors", out.errors);
      col.add(cfg.row, "p50Wait", percentile(out.waits, 50));
      col.add(cfg.row, "p99Wait", percentile(out.waits, 99));
      col.add(cfg.row, "lockCallsPerAcq", out.lockCalls.total / acq);
      col.add(cfg.row, "serverCmdsPerAcq", out.serverCmds / acq);
      if (out.mostHolders > PERMITS)
        broken.push(`${cfg.row} round ${round}: ${out.mostHolders} holders at once.`);
      if (out.errors > 0) notes.push(`${cfg.row} round ${round}: ${out.errors} acquire/work/release errors.`);
      if (out.scriptCheck) notes.push(`${cfg.row} round ${round}: ${out.scriptCheck}.`);
      if (round === 1 && cfg.lib !== semaphoreFloor)
        notes.push(`${cfg.row} lock calls sent in round 1: ${JSON.stringify(out.lockCalls.byCommand)}.`);
      progress(
        `(i) semaphore · ${cfg.lib.label} [${cfg.options.profile}${cfg.processes > 1 ? `, ${cfg.processes} processes` : ""}] · round ${round}/${ctx.rounds}: ${out.wallMs.toFixed(0)} ms, most holders ${out.mostHolders}${out.mostHolders > PERMITS ? ` (MORE THAN ${PERMITS}: BROKEN)` : ""}, ${out.timeouts} timeouts, ${out.errors} errors, ${(out.lockCalls.total / acq).toFixed(2)} lock calls/acq`,
      );
    }
  }
  const rows = CONFIGS.map((cfg) => rowOf(cfg, col));
  if (broken.length)
    notes.unshift(
      `**BROKEN: more than ${PERMITS} holders at once** (the INCR gauge inside the hold): ${broken.join(" ")}`,
    );
  notes.unshift(
    `The work under each permit is INCR \`i:holders\` → ${WORK_MS} ms sleep → DECR \`i:holders\` on the work connection, not (c)'s GET → SET: four holders at once would race on shared stock by design, so the work is the gauge itself. The DECR is answered before the release is sent, so the INCR's answer is exactly the number of holders at that moment, in every process alike; *most holders at once* is the largest answer (worst run in brackets). *Mean holders* is the sum of the holds' durations ÷ the wall (at most ${PERMITS}).`,
    `node-redlock 5β has no semaphore and the seed design has none, so neither is in (i); redis-semaphore's \`Semaphore\` (a sorted set polled every \`retryInterval\`) is the peer.`,
    "A contender whose tasks give up (timeouts) ends its wall early: read wall together with timeouts.",
    "How a freed permit reaches a waiter: Lockyard's semaphore queues waiting processes in Redis for fairness, and a release grants the freed permit to its own process's next waiter inside the script when that waiter's attempt would have got it (packages/lock README, *Handoff within a process*); otherwise (a release while the head is already named in another, or a permit owed to another process) the release publishes and the waiting head attempts (release → message → attempt; across processes the attempt of a process that is not owed the permit is refused, hence more calls per acquisition with 2 processes). redis-semaphore's waiters poll every `retryInterval` with no jitter, so tasks started together retry together and about as many get in per interval as there are free permits.",
  );
  if (ctx.quick) notes.unshift(`--quick: ${tasks} tasks.`);
  return {
    id: "i",
    title: `(i) Semaphore under contention: ${tasks} tasks on one ${PERMITS}-permit semaphore, INCR holders → ${WORK_MS} ms → DECR under each permit, in one process and split over ${PROCESSES}`,
    columns: [
      { key: "processes", header: "processes", digits: 0 },
      { key: "wallMs", header: "wall ms", digits: 0 },
      { key: "xFloor", header: "× floor", digits: 2 },
      { key: "peerX", header: "redis-semaphore wall ÷ Lockyard", digits: 2 },
      { key: "meanHolders", header: "mean holders", digits: 2 },
      { key: "mostHolders", header: `most holders at once (≤ ${PERMITS})`, digits: 0 },
      { key: "timeouts", header: "timeouts", digits: 0 },
      { key: "errors", header: "errors", digits: 0 },
      { key: "lockCallsPerAcq", header: "lock calls/acq", digits: 2 },
      { key: "serverCmdsPerAcq", header: "Redis cmds/acq incl. in scripts", digits: 1 },
      { key: "p50Wait", header: "p50 wait ms", digits: 0 },
      { key: "p99Wait", header: "p99 wait ms", digits: 0 },
    ],
    rows,
    settings,
    notes,
  };
}

function rowOf(cfg: Config, col: Collector): Row {
  const wall = col.values(cfg.row, "wallMs");
  const values: Record<string, Spread> = {
    ...col.spreads(cfg.row),
    xFloor: spread(ratios(wall, col.values("floor", "wallMs"))),
  };
  const row: Row = {
    id: cfg.row,
    label: cfg.lib.label,
    profile:
      cfg.lib === semaphoreFloor
        ? "–"
        : cfg.options.profile === "seed"
          ? "seed: 100 ms retry, 5 s wait"
          : "recommended",
    values,
  };
  if (cfg.lib !== lockyardSemaphore) return row;
  // Per round, the peer's wall in the same settings and process count divided by Lockyard's.
  const peerRow = cfg.row.replace(lockyardSemaphore.id, redisSemaphoreSemaphore.id);
  values.peerX = spread(ratios(col.values(peerRow, "wallMs"), wall));
  row.targets = targetsOf(cfg, values);
  return row;
}

function targetsOf(cfg: Config, v: Row["values"]): TargetResult[] {
  const at = cfg.processes > 1 ? `${cfg.processes} processes: ` : "";
  const holders = target(
    `${at}most holders at once ≤ ${PERMITS} (worst run)`,
    v.mostHolders!.max,
    "<=",
    PERMITS,
  );
  if (cfg.options.profile === "seed")
    return [holders, target("0 timeouts with the seed's settings (worst run)", v.timeouts!.max, "<=", 0)];
  return [
    holders,
    target(`${at}≤ 3 lock calls per acquisition`, v.lockCallsPerAcq!.median, "<=", 3),
    target(`${at}faster than redis-semaphore (its wall ÷ Lockyard's)`, v.peerX!.median, ">=", 1, "×"),
    ...(cfg.processes === 1 ? [target("wall time ≤ 1.5× the floor", v.xFloor!.median, "<=", 1.5, "×")] : []),
  ];
}
