import type { Context } from "../context.js";
import { sleep } from "../lib/sleep.js";
import { listLocks } from "../locks/snapshot.js";
import type { ScenarioName } from "../schemas.js";
import type { ScenarioEvent, ScenarioEventKind } from "../types.js";

type Data = Record<string, string | number | boolean | null>;

/** What a scenario script gets: its own resource names, scaled time, and the timeline to write to. */
export class Timeline {
  readonly #started = performance.now();
  readonly #startedAt = Date.now();
  #seq = 0;
  /** Events are emitted in order even though each waits for its lock snapshot. */
  #chain: Promise<void> = Promise.resolve();

  constructor(
    readonly ctx: Context,
    readonly runId: string,
    readonly name: ScenarioName,
    readonly timeScale: number,
    readonly signal: AbortSignal,
    /** Where events go, in order (the run's log). */
    readonly out: (event: ScenarioEvent) => void,
  ) {}

  /** The scenario's own namespace, e.g. `demo:watchdog:1a2b3c4d`. */
  get prefix(): string {
    return `demo:${this.name}:${this.runId}`;
  }

  resource(suffix = "lock"): string {
    return `${this.prefix}:${suffix}`;
  }

  /** A documented duration, scaled for quick runs (tests); at least 1 ms. */
  ms(documented: number): number {
    return Math.max(1, Math.round(documented * this.timeScale));
  }

  pause(documentedMs: number): Promise<void> {
    return sleep(this.ms(documentedMs), this.signal);
  }

  elapsed(): number {
    return Math.round(performance.now() - this.#started);
  }

  /** Records an event with the scenario's lock state taken right after it. */
  emit(actor: string, kind: ScenarioEventKind, message: string, data: Data = {}): Promise<void> {
    const elapsedMs = this.elapsed();
    const at = this.#startedAt + elapsedMs;
    const seq = ++this.#seq;
    const locks = listLocks(this.ctx.locks, this.prefix).catch(() => []);
    this.#chain = this.#chain.then(async () => {
      this.out({ type: "event", seq, at, elapsedMs, actor, kind, message, data, locks: await locks });
    });
    return this.#chain;
  }

  async finish(ok: boolean, summary: string): Promise<void> {
    await this.#chain;
    const elapsedMs = this.elapsed();
    this.out({
      type: "done",
      seq: ++this.#seq,
      at: this.#startedAt + elapsedMs,
      elapsedMs,
      name: this.name,
      ok,
      summary,
    });
  }
}
