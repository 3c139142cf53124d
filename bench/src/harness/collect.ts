import type { TargetResult } from "../scenarios/types.js";
import { type Spread, spread } from "./stats.js";

/** Gathers one value per round for each (row, metric), then turns them into median/min/max. */
export class Collector {
  private readonly data = new Map<string, Map<string, number[]>>();

  add(row: string, metric: string, value: number): void {
    let m = this.data.get(row);
    if (!m) {
      m = new Map();
      this.data.set(row, m);
    }
    let arr = m.get(metric);
    if (!arr) {
      arr = [];
      m.set(metric, arr);
    }
    arr.push(value);
  }

  values(row: string, metric: string): number[] {
    return this.data.get(row)?.get(metric) ?? [];
  }

  has(row: string): boolean {
    return this.data.has(row);
  }

  spreads(row: string): Record<string, Spread> {
    const out: Record<string, Spread> = {};
    for (const [metric, arr] of this.data.get(row) ?? []) out[metric] = spread(arr);
    return out;
  }
}

export function target(
  text: string,
  measured: number,
  cmp: "<=" | ">=",
  limit: number,
  unit = "",
): TargetResult {
  const pass = Number.isFinite(measured) && (cmp === "<=" ? measured <= limit : measured >= limit);
  return { text, measured, limit, unit, pass };
}
