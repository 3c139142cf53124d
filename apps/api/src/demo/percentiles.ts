/** Nearest-rank percentiles of a sample, rounded to 0.1 ms. Empty sample → zeros. */
export function percentiles(sample: readonly number[]): { p50: number; p95: number; p99: number } {
  const sorted = [...sample].sort((a, b) => a - b);
  const at = (q: number) => {
    if (sorted.length === 0) return 0;
    const v = sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
    return Math.round(v * 10) / 10;
  };
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}
