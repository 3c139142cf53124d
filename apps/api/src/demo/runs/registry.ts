import { randomBytes } from "node:crypto";

/** A run id: 16 random hex characters (it names Redis keys, so no braces or separators). */
export const newRunId = () => randomBytes(8).toString("hex");

interface LocalRun {
  cancel: (reason: string) => void;
}

/**
 * The runs this instance is executing, and the watchers waiting for their next event. Watchers of a run
 * executing here wake as soon as an event is stored; others poll Redis (see watch.ts).
 */
export class RunRegistry {
  readonly #runs = new Map<string, LocalRun>();
  readonly #waiters = new Map<string, Set<() => void>>();

  add(runId: string, run: LocalRun): void {
    this.#runs.set(runId, run);
  }

  remove(runId: string): void {
    this.#runs.delete(runId);
    this.notify(runId);
  }

  isLocal(runId: string): boolean {
    return this.#runs.has(runId);
  }

  /** Cancels a run executing here; false when it is not here. */
  cancel(runId: string, reason: string): boolean {
    const run = this.#runs.get(runId);
    run?.cancel(reason);
    return run !== undefined;
  }

  cancelAll(reason: string): void {
    for (const run of this.#runs.values()) run.cancel(reason);
  }

  get size(): number {
    return this.#runs.size;
  }

  notify(runId: string): void {
    const waiters = this.#waiters.get(runId);
    if (!waiters) return;
    this.#waiters.delete(runId);
    for (const wake of waiters) wake();
  }

  /** Resolves on the run's next stored event, after `maxMs`, or when `signal` aborts. */
  wait(runId: string, maxMs: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      let set = this.#waiters.get(runId);
      if (!set) {
        set = new Set();
        this.#waiters.set(runId, set);
      }
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        const s = this.#waiters.get(runId);
        s?.delete(done);
        if (s?.size === 0) this.#waiters.delete(runId);
        resolve();
      };
      const timer = setTimeout(done, maxMs);
      timer.unref();
      set.add(done);
      signal?.addEventListener("abort", done, { once: true });
      if (signal?.aborted) done();
    });
  }
}
