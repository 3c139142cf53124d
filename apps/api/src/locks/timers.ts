/** Named one-shot timers, all `.unref()`'d, so a stop can clear every one and a test can count them. */
export class Timers {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  get size(): number {
    return this.timers.size;
  }

  /** Runs `fn` after `ms`, replacing any pending timer of that name. */
  set(name: string, ms: number, fn: () => void): void {
    this.clear(name);
    const t = setTimeout(() => {
      this.timers.delete(name);
      fn();
    }, ms);
    t.unref();
    this.timers.set(name, t);
  }

  has(name: string): boolean {
    return this.timers.has(name);
  }

  clear(name: string): void {
    const t = this.timers.get(name);
    if (t) clearTimeout(t);
    this.timers.delete(name);
  }

  clearAll(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
