import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { repoPath } from "../harness/repo.js";
import type { Spread } from "../harness/stats.js";
import type { ScenarioResult } from "../scenarios/types.js";
import { num } from "./format.js";
import { summaryTable } from "./markdown.js";
import type { BenchReport } from "./report.js";
import { semaphoreLine } from "./semaphore-line.js";
import { pgVersusRedis } from "./stores.js";

const START = "<!-- bench:start -->";
const END = "<!-- bench:end -->";

interface Pick {
  header: string;
  scenario: string;
  row: (libId: string) => string;
  metric: string;
  digits: number;
  /** Read when the row has no `metric`: another store's own count (e.g. SQL statements), with its unit. */
  otherStore?: { metric: string; unit: string };
}

const PICKS: Pick[] = [
  { header: "(a) sequential pairs/s", scenario: "a", row: (id) => id, metric: "pairsPerSec", digits: 0 },
  { header: "(b) 64 loops pairs/s", scenario: "b", row: (id) => id, metric: "pairsPerSec", digits: 0 },
  {
    header: "(c) 200 on one key, wall ms",
    scenario: "c",
    row: (id) => (id === "seed" ? "seed@seed" : `${id}@recommended`),
    metric: "wallMs",
    digits: 0,
  },
  {
    header: "(c) lock calls/acq",
    scenario: "c",
    row: (id) => (id === "seed" ? "seed@seed" : `${id}@recommended`),
    metric: "lockCallsPerAcq",
    digits: 1,
    otherStore: { metric: "sqlPerAcq", unit: " SQL" },
  },
  {
    header: "(c) timeouts, seed settings",
    scenario: "c",
    row: (id) => `${id}@seed`,
    metric: "timeouts",
    digits: 0,
  },
  {
    header: "(d) calls per 100 locks per tick",
    scenario: "d",
    row: (id) => id,
    metric: "callsPer100",
    digits: 2,
  },
  { header: "(d) heap B/lock", scenario: "d", row: (id) => id, metric: "heapBytes", digits: 0 },
];

function value(scenarios: ScenarioResult[], pick: Pick, libId: string): string {
  const s = scenarios.find((x) => x.id === pick.scenario);
  const rowId = pick.row(libId);
  const row = s?.rows.find((r) => r.id === rowId);
  const v: Spread | undefined = row?.values[pick.metric];
  if (v) return num(v.median, pick.digits);
  const alt = pick.otherStore && row?.values[pick.otherStore.metric];
  return alt ? `${num(alt.median, pick.digits)}${pick.otherStore!.unit}` : "–";
}

/** One compact table across scenarios (medians only), then the targets. */
export function readmeSection(report: BenchReport): string {
  const libs = [
    ["lockyard", "Lockyard"],
    ["redis-semaphore", "redis-semaphore Mutex"],
    ["redlock", "node-redlock 5β"],
    ["seed", "seed design (100 ms poll)"],
    ["postgres", "Lockyard on PostgreSQL (lock table)"],
  ] as const;
  const floor = report.scenarios.find((s) => s.id === "c")?.rows.find((r) => r.id === "floor");
  const lines = [
    `| | ${PICKS.map((p) => p.header).join(" | ")} |`,
    `| --- | ${PICKS.map(() => "---:").join(" | ")} |`,
    ...libs
      .filter(
        ([id]) => id !== "postgres" || report.scenarios.some((s) => s.rows.some((r) => r.id.startsWith(id))),
      )
      .map(([id, label]) => `| ${label} | ${PICKS.map((p) => value(report.scenarios, p, id)).join(" | ")} |`),
  ];
  if (floor) {
    const wall = num(floor.values.wallMs?.median ?? Number.NaN, 0);
    lines.push(`| in-process floor | | | ${wall} | | | | |`);
  }
  const api = report.scenarios.find((s) => s.id === "e");
  const apiLine =
    api && !api.pending
      ? `API (e): ${api.rows.map((r) => `${r.id} ${num(r.values.reqPerSec?.median ?? Number.NaN, 0)} req/s`).join(", ")}.`
      : "API (e): pending.";
  const liveLine = liveViewLine(report.scenarios.find((s) => s.id === "g"));
  const crossLine = crossProcessLine(report.scenarios.find((s) => s.id === "f"));
  const semLine = semaphoreLine(report.scenarios.find((s) => s.id === "i"));
  // Scenarios re-run alone since the full run were measured another day, maybe on a differently loaded machine.
  const rerun = (report.merged ?? [])
    .map((m) => `${m.scenarios.join(", ")} re-run ${m.at.slice(0, 10)}`)
    .join("; ");
  const when = rerun ? `${report.generatedAt.slice(0, 10)}; ${rerun}` : report.generatedAt.slice(0, 10);
  return [
    `Medians of one \`npm run bench\` on ${report.machine.cpus}× ${report.machine.cpuModel}, Redis ${report.machine.redis}, Node ${report.machine.node} (${when}). ${apiLine}`,
    "",
    ...(liveLine ? [liveLine, ""] : []),
    ...(crossLine ? [crossLine, ""] : []),
    ...(semLine ? [semLine, ""] : []),
    lines.join("\n"),
    "",
    ...[pgVersusRedis(report.scenarios.find((s) => s.id === "c"))].flatMap((line) =>
      line ? [line, ""] : [],
    ),
    summaryTable(report),
  ].join("\n");
}

/** (g) in one sentence: propagation, Redis CPU by subscribers and idle bytes. */
function liveViewLine(g: ScenarioResult | undefined): string | null {
  if (!g || g.pending) return null;
  const v = (n: number, metric: string, digits: number) =>
    num(g.rows.find((r) => r.id === `n${n}`)?.values[metric]?.median ?? Number.NaN, digits);
  return `Live view (g), 1 000 held locks among 200 000 other keys: a new or released lock reaches all 50 subscribers in ${v(50, "p50", 0)} ms p50 / ${v(50, "p99", 0)} ms p99; Redis CPU while locks churn is ${v(0, "churnCpu", 1)} % of a core with no subscriber, ${v(1, "churnCpu", 1)} % with 1, ${v(5, "churnCpu", 1)} % with 5 and ${v(50, "churnCpu", 1)} % with 50; an idle subscriber receives ${v(50, "idleBytes", 0)} B/s.`;
}

/** (f) in one sentence: Lockyard against the floor and the fastest peer at each P, and on the Cluster. */
function crossProcessLine(f: ScenarioResult | undefined): string | null {
  if (!f || f.pending) return null;
  const ps = [...new Set(f.rows.map((r) => r.values.processes?.median ?? 1).filter((p) => p > 1))];
  const lockyard = (p: number) => f.rows.find((r) => r.id === `lockyard@${p}`);
  const med = (p: number, metric: string, digits: number) =>
    num(lockyard(p)?.values[metric]?.median ?? Number.NaN, digits);
  const each = (metric: string, digits: number) => ps.map((p) => med(p, metric, digits)).join(" / ");
  const floorWall = num(f.rows.find((r) => r.id === "floor")?.values.wallMs?.median ?? Number.NaN, 0);
  const bestPeer = ps
    .map((p) => {
      const peers = f.rows.filter((r) => r.id.endsWith(`@${p}`) && !r.id.startsWith("lockyard@"));
      const best = peers.sort(
        (a, b) =>
          (a.values.wallMs?.median ?? Number.POSITIVE_INFINITY) -
          (b.values.wallMs?.median ?? Number.POSITIVE_INFINITY),
      )[0];
      return best ? `${best.label} ${num(best.values.wallMs?.median ?? Number.NaN, 0)} ms` : "–";
    })
    .join(" / ");
  return `Across processes (f), (c)'s deduction split over ${ps.join(" / ")} processes: Lockyard ${each("wallMs", 0)} ms, ${each("xFloor", 2)}× the single-process floor (${floorWall} ms), ${each("lockCallsPerAcq", 1)} lock calls per acquisition, finish spread ${each("finishSpreadPct", 0)} % of wall, the fastest peer ${bestPeer}; on a 3-master Cluster Lockyard took ${each("clusterWallMs", 0)} ms.`;
}

/** Replaces the README's bench section between its markers; returns false when the markers are missing. */
export function updateReadme(report: BenchReport): boolean {
  const path = repoPath("README.md");
  if (!existsSync(path)) return false;
  const text = readFileSync(path, "utf8");
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a < 0 || b < a) return false;
  writeFileSync(path, `${text.slice(0, a + START.length)}\n${readmeSection(report)}\n${text.slice(b)}`);
  return true;
}
