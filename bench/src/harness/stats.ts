/** Median, min and max of a few repeated runs: what every table cell shows. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function spread(runs: number[]): Spread {
  const sorted = [...runs].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs };
  const mid = Math.floor(n / 2);
  const median = n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[n - 1]!, runs };
}

/** Nearest-rank percentile of an unsorted sample, p in 0..100. */
export function percentile(sample: number[], p: number): number {
  if (sample.length === 0) return Number.NaN;
  const sorted = Float64Array.from(sample).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Per-round ratios a[i]/b[i]: both were measured in the same round, so machine noise mostly cancels. */
export function ratios(a: number[], b: number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) out.push(a[i]! / b[i]!);
  return out;
}

/** The items, starting at a different one each round, so no library always runs first (or right after another). */
export function rotate<T>(items: readonly T[], round: number): T[] {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}
