import { type Clock, OneTimer } from "./clock.js";

/** An attempt in flight that must give up at `at` (which may be never), or when close() runs. */
export interface Deadline {
  at: number;
  expire(closed: boolean): void;
}

/**
 * The deadlines of every attempt in flight of one Locks, on one timer. An attempt adds itself and removes
 * itself when answered: two Set operations, no timer of its own on the hot path. Later deadlines (the usual
 * case: the same waitMs, asked later) never re-arm the timer.
 */
export class Deadlines {
  private readonly pending = new Set<Deadline>();
  private readonly timer: OneTimer;

  constructor(private readonly clock: Clock) {
    this.timer = new OneTimer(clock, () => this.fire());
  }

  add(d: Deadline): void {
    this.pending.add(d);
    this.timer.armBy(d.at);
  }

  delete(d: Deadline): void {
    this.pending.delete(d);
    if (this.pending.size === 0) this.timer.disarm();
  }

  /** close(): every attempt in flight gives up now, whatever its deadline. */
  expireAll(): void {
    const all = [...this.pending];
    this.pending.clear();
    this.timer.disarm();
    for (const d of all) d.expire(true);
  }

  private fire(): void {
    const now = this.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const d of this.pending) {
      if (d.at <= now) {
        this.pending.delete(d);
        d.expire(false);
      } else if (d.at < next) next = d.at;
    }
    this.timer.armBy(next);
  }
}
