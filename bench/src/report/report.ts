import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import path from "node:path";
import type { Redis } from "ioredis";
import { repoPath } from "../harness/repo.js";
import type { ScenarioResult } from "../scenarios/types.js";
import { markdown } from "./markdown.js";

export interface BenchReport {
  generatedAt: string;
  durationSeconds: number;
  rounds: number;
  throughputRounds: number;
  quick: boolean;
  machine: { node: string; redis: string; cpus: number; cpuModel: string };
  scenarios: ScenarioResult[];
  /** Scenarios re-run alone (`--only … --merge`) after the full run, with when. */
  merged?: { scenarios: string[]; at: string; machine: BenchReport["machine"] }[];
}

export async function machineInfo(admin: Redis): Promise<BenchReport["machine"]> {
  const info = await admin.info("server");
  return {
    node: process.versions.node,
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? "unknown",
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
  };
}

/**
 * JSON has no Infinity or NaN (JSON.stringify writes null), so a merge used to turn a measured ∞ (e.g. a p99 that
 * never arrived) into "–". They are written as strings and read back as numbers.
 */
const NON_FINITE = new Map<string, number>([
  ["Infinity", Number.POSITIVE_INFINITY],
  ["-Infinity", Number.NEGATIVE_INFINITY],
  ["NaN", Number.NaN],
]);
const keepNonFinite = (_key: string, v: unknown): unknown =>
  typeof v === "number" && !Number.isFinite(v) ? String(v) : v;
const restoreNonFinite = (_key: string, v: unknown): unknown =>
  typeof v === "string" && NON_FINITE.has(v) ? NON_FINITE.get(v) : v;

/** Writes bench/results/<name>.{md,json} (latest for full runs; anything else is git-ignored). */
export function writeResults(report: BenchReport, name: string): { md: string; dir: string } {
  const dir = repoPath("bench/results/");
  mkdirSync(dir, { recursive: true });
  const md = markdown(report);
  writeFileSync(path.join(dir, `${name}.md`), md);
  writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify(report, keepNonFinite, 2)}\n`);
  return { md, dir };
}

/**
 * latest.json with this partial run's scenarios put in place of (or after) the full run's, so one scenario can be
 * re-measured without re-running the rest; null when there is no latest.json to merge into.
 */
export function mergeIntoLatest(partial: BenchReport): BenchReport | null {
  const file = repoPath("bench/results/latest.json");
  if (!existsSync(file)) return null;
  const latest = JSON.parse(readFileSync(file, "utf8"), restoreNonFinite) as BenchReport;
  const ids = partial.scenarios.map((s) => s.id);
  const scenarios = latest.scenarios.filter((s) => !ids.includes(s.id));
  scenarios.push(...partial.scenarios);
  scenarios.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const merged = [
    ...(latest.merged ?? []).filter((m) => !m.scenarios.every((id) => ids.includes(id))),
    { scenarios: ids, at: partial.generatedAt, machine: partial.machine },
  ];
  return { ...latest, scenarios, merged };
}
