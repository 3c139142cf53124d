import { percentile } from "./stats.js";

/** One hold of the lock: from the acquire's resolution to the release call, in ms on a clock all processes share. */
export type Hold = [from: number, to: number];

/**
 * Where a contended run's time goes, from every hold of every process laid on one clock: the holds themselves,
 * and the gaps between one hold's end and the next hold's start, split by whether the lock stayed in the
 * process (a local handoff) or went to another one. With one process (the floor) every gap is local.
 */
export interface Timeline {
  holds: number;
  /** Mean time a hold lasted (the task: GET → work → SET). */
  meanHoldMs: number;
  localGaps: number;
  localGapP50Ms: number;
  localGapSumMs: number;
  crossGaps: number;
  crossGapP50Ms: number;
  crossGapSumMs: number;
  /** Holds that started before an earlier one ended: a broken lock, which should never happen. */
  overlaps: number;
}

/** Counts holds that start before the latest end seen so far (holds sorted by start). */
export function countOverlaps(holds: Hold[]): number {
  const sorted = [...holds].sort((a, b) => a[0] - b[0]);
  let overlaps = 0;
  let lastEnd = Number.NEGATIVE_INFINITY;
  for (const [start, end] of sorted) {
    if (start < lastEnd) overlaps++;
    lastEnd = Math.max(lastEnd, end);
  }
  return overlaps;
}

/** `byProcess[i]` are process i's holds. */
export function timeline(byProcess: Hold[][]): Timeline {
  const all = byProcess
    .flatMap((holds, process) => holds.map(([from, to]) => ({ from, to, process })))
    .sort((a, b) => a.from - b.from);
  const local: number[] = [];
  const cross: number[] = [];
  for (let i = 1; i < all.length; i++) {
    const prev = all[i - 1]!;
    const next = all[i]!;
    (next.process === prev.process ? local : cross).push(Math.max(0, next.from - prev.to));
  }
  const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
  return {
    holds: all.length,
    meanHoldMs: all.length ? sum(all.map((h) => h.to - h.from)) / all.length : Number.NaN,
    localGaps: local.length,
    localGapP50Ms: percentile(local, 50),
    localGapSumMs: sum(local),
    crossGaps: cross.length,
    crossGapP50Ms: percentile(cross, 50),
    crossGapSumMs: sum(cross),
    overlaps: countOverlaps(byProcess.flat()),
  };
}
