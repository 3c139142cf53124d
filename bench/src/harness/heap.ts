const gc = (globalThis as { gc?: () => void }).gc;

export const canMeasureHeap = (): boolean => typeof gc === "function";

/** Heap in use after full collections; NaN without --expose-gc. */
export function settledHeap(): number {
  if (!gc) return Number.NaN;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
