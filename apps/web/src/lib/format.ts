/**
 * A duration in seconds, the one time format of the dashboard: "0.92 s", "2.61 s", "12.3 s", and
 * "0.004 s" for the few-millisecond latencies of a fast run.
 */
export function formatSeconds(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  const s = ms / 1000;
  if (ms > 0 && ms < 0.5) return "< 0.001 s";
  if (ms < 10) return `${s.toFixed(3)} s`;
  if (ms < 10_000) return `${s.toFixed(2)} s`;
  return `${s.toFixed(1)} s`;
}

/** Takes milliseconds, shows seconds (see formatSeconds). */
export const formatMs = formatSeconds;

/** Wall-clock time of day, to the second: "14:03:27". */
export function timeOfDay(epochMs: number): string {
  const d = new Date(epochMs);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A real minus sign for negatives, so "−3" reads as a number below zero at a glance. */
export function signed(n: number): string {
  return n < 0 ? `−${Math.abs(n)}` : String(n);
}

/** Owner ids are `<instance>:<128-bit hex>`: the start of the random part tells owners apart. */
export function shortId(owner: string): string {
  const rand = owner.slice(owner.lastIndexOf(":") + 1);
  return rand.length > 6 ? `${rand.slice(0, 4)}…` : rand;
}
