/**
 * One timer for every TTL bar on the page. The bars' fills move on the compositor (a transform
 * animation), so the ticker only refreshes the small countdown text and the colour level: four times a
 * second, or once a second when the user prefers reduced motion. Nothing here reads layout.
 */
export interface Tickable {
  tick(now: number, reducedMotion: boolean): void;
}

const bars = new Set<Tickable>();
let timer: ReturnType<typeof setTimeout> | null = null;
let motionQuery: MediaQueryList | null = null;

export const TICK_MS = 250;
export const REDUCED_TICK_MS = 1000;

export function prefersReducedMotion(): boolean {
  if (typeof window === "undefined" || typeof window.matchMedia !== "function") return false;
  motionQuery ??= window.matchMedia("(prefers-reduced-motion: reduce)");
  return motionQuery.matches;
}

function schedule(): void {
  if (timer !== null || bars.size === 0) return;
  const reduced = prefersReducedMotion();
  const period = reduced ? REDUCED_TICK_MS : TICK_MS;
  // Aligned to the period, so every bar on the page changes its text in the same frame.
  const now = performance.now();
  timer = setTimeout(run, period - (now % period) + 1);
}

function run(): void {
  timer = null;
  if (document.visibilityState !== "hidden") {
    const now = performance.now();
    const reduced = prefersReducedMotion();
    for (const bar of bars) bar.tick(now, reduced);
  }
  schedule();
}

/** Adds a bar to the shared ticker; returns its removal. */
export function subscribeTicker(bar: Tickable): () => void {
  bars.add(bar);
  schedule();
  return () => {
    bars.delete(bar);
    if (bars.size === 0 && timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
  };
}
