// Builds nothing (the suite runs @lockyard/lock and @lockyard/api from their dist, built by turbo's
// ^build), provides the figures log, and prints every scenario's figure together at the end.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";

export default function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(tmpdir(), "lockyard-faults-"));
  const log = path.join(dir, "figures.jsonl");
  project.provide("faultsLog", log);
  return () => {
    let lines: { figure?: string; checker?: { holds: number; possible: number; overlaps: number } }[] = [];
    try {
      lines = readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    } catch {}
    const runs = lines.filter((l) => l.checker).map((l) => l.checker!);
    if (lines.length > 0) {
      console.log("\nFault-injection figures");
      for (const l of lines) if (l.figure) console.log(`  ${l.figure}`);
      const holds = runs.reduce((n, r) => n + r.holds + r.possible, 0);
      const bad = runs.reduce((n, r) => n + r.overlaps, 0);
      console.log(`  no-two-holders, all runs: ${holds} holds in ${runs.length} runs, ${bad} overlaps`);
    }
    rmSync(dir, { recursive: true, force: true });
  };
}
