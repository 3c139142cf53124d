const started = performance.now();

/** One line per step, with the time since the bench started, so a user watching sees it moving. */
export function progress(message: string): void {
  const s = ((performance.now() - started) / 1000).toFixed(1).padStart(6);
  console.log(`[bench ${s}s] ${message}`);
}

export const elapsedSeconds = (): number => (performance.now() - started) / 1000;
