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
  /**
   * Runs `fn` once this process has handled the I/O that follows this turn (usually the answers to the calls
   * this turn made); with no I/O, after AFTER_IO_MIN_MS to AFTER_IO_MAX_MS.
   */
  afterIo(fn: () => void): void;
  /**
   * Keeps the process alive until the returned function is called: for a waiter's sleep, which is work its
   * caller awaits (every other timer here is unref'd). The simulation has no process to keep.
   */
  keepAlive?(): () => void;
}

/** Longer than any wait (MAX_MS): the interval only holds the event loop open, it never fires in practice. */
const KEEP_ALIVE_INTERVAL_MS = 2 ** 31 - 1;

/**
 * How long afterIo waits at most for I/O to handle (ms). Node counts a timer from the event loop's clock, read
 * in whole ms when the turn began: a 1 ms timer fires anywhere from 0 to 1 ms later, and with 1 here about one
 * early release in eight went out before the new holder's first answer. 2 waits at least 1 ms.
 */
export const AFTER_IO_MAX_MS = 2;
/** How long afterIo waits at least for I/O, when none comes (ms). */
export const AFTER_IO_MIN_MS = AFTER_IO_MAX_MS - 1;

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
  afterIo(fn) {
    let done = false;
    const run = () => {
      if (done) return;
      done = true;
      clearTimeout(backstop);
      fn();
    };
    // Ref'd, so that the call goes out even in a process with nothing else to do.
    const backstop = setTimeout(run, AFTER_IO_MAX_MS);
    // An unref'd immediate queued in the check phase runs after the loop's next wait for I/O, which returns with
    // the first I/O or the backstop. (Queued outside the check phase, an unref'd immediate may wait for I/O
    // with no bound; a ref'd one runs before any I/O is read.)
    setImmediate(() => setImmediate(run).unref());
  },
  keepAlive() {
    const handle = setInterval(() => {}, KEEP_ALIVE_INTERVAL_MS);
    return () => clearInterval(handle);
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
