/**
 * Where the core reads time and arms timers. The real clock is `performance.now()` and unref'd
 * `setTimeout`; the deterministic simulation (test/sim) passes a virtual one, so every timer the library
 * uses (watchdog, late release, retries, deadlines) runs on simulated time.
 */
export interface Clock {
  now(): number;
  /** Arms a timer that never keeps the process alive. */
  setTimer(fn: () => void, ms: number): Timer;
  clearTimer(timer: Timer): void;
  /** Runs `fn` on the next turn of the event loop, after the I/O this turn started (setImmediate). */
  nextTurn(fn: () => void): void;
}

/** An opaque timer handle. */
export type Timer = { readonly __timer: true } | NodeJS.Timeout;

export const realClock: Clock = {
  now: () => performance.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimer(timer) {
    clearTimeout(timer as NodeJS.Timeout);
  },
  nextTurn(fn) {
    // Not unref'd: an unref'd immediate does not stop the event loop from waiting for I/O, so one made in a
    // timer callback ran only once something else woke the loop (the release of an early handoff sat there
    // until the new holder's first reply, or its next timer when it made no call). A ref'd one runs this turn.
    setImmediate(fn);
  },
};

/** One re-armable timer: the shared helper behind the watchdog's and the late release's single timer. */
export class OneTimer {
  private timer: Timer | undefined;
  /** When the armed timer fires; +Infinity when disarmed. */
  at = Number.POSITIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    private readonly fire: () => void,
  ) {}

  /** Arms for `at` unless already armed for earlier. */
  armBy(at: number): void {
    if (at === Number.POSITIVE_INFINITY || at >= this.at) return;
    this.disarm();
    this.at = at;
    this.timer = this.clock.setTimer(
      () => {
        this.timer = undefined;
        this.at = Number.POSITIVE_INFINITY;
        this.fire();
      },
      Math.max(0, at - this.clock.now()),
    );
  }

  disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.at = Number.POSITIVE_INFINITY;
  }
}
