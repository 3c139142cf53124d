export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 100) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(1)} ms`;
}

/** A real minus sign for negatives, so "−3" reads as a number below zero at a glance. */
export function signed(n: number): string {
  return n < 0 ? `−${Math.abs(n)}` : String(n);
}

export function clockTime(epochMs: number): string {
  const d = new Date(epochMs);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** Owner ids are `<instance>:<128-bit hex>`: the start of the random part tells owners apart. */
export function shortId(owner: string): string {
  const rand = owner.slice(owner.lastIndexOf(":") + 1);
  return rand.length > 6 ? `${rand.slice(0, 4)}…` : rand;
}
