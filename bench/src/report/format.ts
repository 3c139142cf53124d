import type { Spread } from "../harness/stats.js";
import type { TargetResult } from "../scenarios/types.js";

export function num(n: number, digits: number): string {
  if (n === Number.POSITIVE_INFINITY) return "∞";
  if (!Number.isFinite(n)) return "–";
  return n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** "median (min–max)", or just the median when every run agreed. */
export function cell(s: Spread | undefined, digits: number): string {
  if (!s || s.runs.length === 0 || !Number.isFinite(s.median)) return "–";
  const m = num(s.median, digits);
  const lo = num(s.min, digits);
  const hi = num(s.max, digits);
  return lo === hi ? m : `${m} (${lo}–${hi})`;
}

export const verdict = (t: TargetResult): string => (t.pass ? "PASS" : "MISS");

export function targetLine(t: TargetResult): string {
  const digits = Math.abs(t.measured) >= 100 || Number.isInteger(t.measured) ? 0 : 2;
  return `${t.text}: ${num(t.measured, digits)}${t.unit} ${verdict(t)}`;
}
