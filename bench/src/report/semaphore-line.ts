import type { ScenarioResult } from "../scenarios/types.js";
import { num } from "./format.js";

/** (i) in one sentence: Lockyard's semaphore against the floor and redis-semaphore, in one process and in two. */
export function semaphoreLine(i: ScenarioResult | undefined): string | null {
  if (!i || i.pending) return null;
  const v = (row: string, metric: string, digits: number) =>
    num(i.rows.find((r) => r.id === row)?.values[metric]?.median ?? Number.NaN, digits);
  // The worst run, not the median: one run above the permits is a broken semaphore.
  const most = (row: string) =>
    num(i.rows.find((r) => r.id === row)?.values.mostHolders?.max ?? Number.NaN, 0);
  const both = (p: string) =>
    `Lockyard ${v(`lockyard@${p}`, "wallMs", 0)} ms (${v(`lockyard@${p}`, "lockCallsPerAcq", 2)} lock calls per acquisition, at most ${most(`lockyard@${p}`)} holders at once), redis-semaphore ${v(`redis-semaphore@${p}`, "wallMs", 0)} ms (${v(`redis-semaphore@${p}`, "lockCallsPerAcq", 2)}, at most ${most(`redis-semaphore@${p}`)})`;
  return `Semaphore (i), one 4-permit semaphore taken by every task at once, 2 ms per hold: in one process ${both("recommended")}, the in-process floor ${v("floor", "wallMs", 0)} ms (Lockyard ${v("lockyard@recommended", "xFloor", 2)}× it); split over 2 processes ${both("P2")}.`;
}
