import type { LocksDeltaEvent, LocksEvent, LockView } from "../src/types.js";

/** A hang guard for tests, never a speed assertion. */
const GUARD_MS = 20_000;

/**
 * Reads a `locks.watch` stream the way a dashboard must: the first event is a snapshot, and each later event is
 * applied to the list it holds (removed by key, then added/changed by store + key).
 */
export class LockEvents {
  readonly locks = new Map<string, LockView>();
  readonly events: LocksEvent[] = [];
  private readonly it: AsyncIterator<LocksEvent>;

  /** `abort` is the signal given to the caller the stream came from (createCaller(ctx, { signal })). */
  constructor(
    stream: AsyncIterable<LocksEvent>,
    private readonly abort: AbortController,
  ) {
    this.it = stream[Symbol.asyncIterator]();
  }

  /** The next event, applied; throws if the stream ends or nothing comes within the guard. */
  async next(): Promise<LocksEvent> {
    let timer: NodeJS.Timeout | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no locks.watch event within ${GUARD_MS} ms`)), GUARD_MS);
    });
    try {
      const r = await Promise.race([this.it.next(), guard]);
      if (r.done) throw new Error("the locks.watch stream ended");
      this.apply(r.value);
      return r.value;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Events until `match` holds for one; returns it. */
  async until<T extends LocksEvent>(match: (e: LocksEvent) => e is T): Promise<T>;
  async until(match: (e: LocksEvent) => boolean): Promise<LocksEvent>;
  async until(match: (e: LocksEvent) => boolean): Promise<LocksEvent> {
    for (;;) {
      const e = await this.next();
      if (match(e)) return e;
    }
  }

  /** The first delta that mentions `key`. */
  delta(key: string): Promise<LocksDeltaEvent> {
    return this.until(
      (e): e is LocksDeltaEvent =>
        e.kind === "delta" &&
        (e.removed.includes(key) || [...e.added, ...e.changed].some((l) => l.key === key)),
    );
  }

  /** Ends the stream (as a client closing it does) and lets the subscription's cleanup run. */
  async close(): Promise<void> {
    this.abort.abort();
    await this.it.return?.();
  }

  private apply(e: LocksEvent): void {
    if (this.events.length === 0 && e.kind !== "snapshot") throw new Error(`first event was ${e.kind}`);
    this.events.push(e);
    if (e.kind === "snapshot") {
      this.locks.clear();
      for (const l of e.locks) this.locks.set(`${l.store}:${l.key}`, l);
    } else if (e.kind === "delta") {
      for (const [id, l] of this.locks) if (e.removed.includes(l.key)) this.locks.delete(id);
      for (const l of [...e.added, ...e.changed]) this.locks.set(`${l.store}:${l.key}`, l);
    }
  }
}
