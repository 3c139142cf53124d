import { mkdirSync, writeFileSync } from "node:fs";
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

/** Writes bench/results/<name>.{md,json} (latest for full runs; anything else is git-ignored). */
export function writeResults(report: BenchReport, name: string): { md: string; dir: string } {
  const dir = repoPath("bench/results/");
  mkdirSync(dir, { recursive: true });
  const md = markdown(report);
  writeFileSync(path.join(dir, `${name}.md`), md);
  writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  return { md, dir };
}
