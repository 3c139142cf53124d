import { AsyncResource } from "node:async_hooks";
import { setImmediate as flushMicrotasks } from "node:timers/promises";
import { AFTER_IO_MAX_MS, type Clock, type Timer } from "../../src/core/clock.js";
import { Rng } from "./rng.js";

interface Event {
  at: number;
  seq: number;
  proc: SimProcess | null;
  fn: () => void;
  cancelled: boolean;
}

/**
 * The simulated world: one virtual clock, one event queue, one seeded random source. Nothing in it reads
 * real time: every timer the library arms (through the Clock seam) and every network delivery is an event.
 * Between events the real microtask queue is drained, so promise chains run exactly as they would, in an
 * order fixed by the seed.
 */
export class World {
  now = 0;
  readonly rng: Rng;
  readonly trace: string[] = [];
  private queue: Event[] = [];
  /** Set on the first broken invariant: the run stops there, so the trace ends at the failure. */
  stopped = false;
  private seq = 0;

  constructor(
    readonly seed: number,
    /** Keep every line (a replay); otherwise only the last few thousand are kept. */
    private readonly fullTrace = false,
  ) {
    this.rng = new Rng(seed);
  }

  log(line: string): void {
    this.trace.push(`${this.now.toFixed(1).padStart(8)} ${line}`);
    if (!this.fullTrace && this.trace.length > 4000) this.trace.splice(0, 1000);
  }

  at(at: number, fn: () => void, proc: SimProcess | null = null): Event {
    const e: Event = { at: Math.max(at, this.now), seq: this.seq++, proc, fn, cancelled: false };
    // Sorted insert (queues are small).
    let i = this.queue.length;
    while (
      i > 0 &&
      (this.queue[i - 1]!.at > e.at || (this.queue[i - 1]!.at === e.at && this.queue[i - 1]!.seq > e.seq))
    )
      i--;
    this.queue.splice(i, 0, e);
    return e;
  }

  after(ms: number, fn: () => void, proc: SimProcess | null = null): Event {
    return this.at(this.now + ms, fn, proc);
  }

  /** Runs events until the queue is empty or `until` is reached; `check` runs after each event. */
  async run(until: number, check: () => void): Promise<void> {
    await flushMicrotasks();
    check();
    while (this.queue.length > 0 && !this.stopped) {
      const e = this.queue[0]!;
      if (e.at > until) break;
      this.queue.shift();
      if (e.cancelled) continue;
      if (e.proc?.pausedUntil !== undefined && e.proc.pausedUntil > e.at) {
        // A paused process runs nothing: its timers and deliveries wait until it resumes.
        this.at(e.proc.pausedUntil, e.fn, e.proc);
        continue;
      }
      this.now = e.at;
      e.fn();
      // Twice: continuations scheduled by continuations (await chains) settle too.
      await flushMicrotasks();
      await flushMicrotasks();
      check();
    }
  }

  pendingFor(proc: SimProcess): number {
    return this.queue.filter((e) => !e.cancelled && e.proc === proc && e.fn.name !== "delivery").length;
  }
}

/** One simulated process: its own clock view (frozen while paused) and its timers. */
export class SimProcess {
  pausedUntil: number | undefined;
  readonly timers = new Set<Event>();
  readonly clock: Clock;

  constructor(
    readonly world: World,
    readonly name: string,
  ) {
    const self = this;
    this.clock = {
      now: () => world.now,
      setTimer(fn: () => void, ms: number): Timer {
        const bound = AsyncResource.bind(fn);
        const e = world.after(
          ms,
          function timer() {
            self.timers.delete(e);
            bound();
          },
          self,
        );
        self.timers.add(e);
        return e as unknown as Timer;
      },
      clearTimer(t: Timer) {
        const e = t as unknown as Event;
        e.cancelled = true;
        self.timers.delete(e);
      },
      // A deferral, not a timer left behind: not in `timers`; a paused process runs it when it resumes. Always
      // its longest (the real one's backstop), as if no I/O came first.
      afterIo(fn: () => void) {
        world.after(AFTER_IO_MAX_MS, AsyncResource.bind(fn), self);
      },
    };
  }

  /** Stops the process (no timers run, no replies are read) for `ms`: a GC pause, SIGSTOP, a VM migration. */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil ?? 0, this.world.now + ms);
    this.world.log(`${this.name} paused for ${ms} ms`);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimer(resolve, ms));
  }
}
