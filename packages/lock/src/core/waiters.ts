/** A caller waiting for a lock this process could not get. */
export interface Waiter {
  /** Set while the waiter sleeps; calling it ends the sleep early. */
  wake: (() => void) | null;
  /** The head should try now (not only after a release message or its fallback timer). */
  attemptNow: boolean;
}

/**
 * Per-resource waiting state of one Locks: a FIFO of local waiters of which only the head talks to Redis,
 * a count of attempts in flight outside the queue, and the release-message epoch. A release message wakes
 * only the head (no thundering herd); an attempt that was in flight when a message arrived sees the epoch
 * move and retries at once instead of sleeping through the release.
 */
export class Gate {
  readonly queue: Waiter[] = [];
  epoch = 0;
  /** 0 not subscribed, 1 subscribing, 2 subscribed (or failed: the fallback timer then does the work). */
  sub = 0;

  constructor(public inflight: number) {}

  get idle(): boolean {
    return this.queue.length === 0 && this.inflight === 0;
  }

  onRelease(): void {
    this.epoch++;
    this.wakeHead(true);
  }

  wakeHead(attemptNow: boolean): void {
    const h = this.queue[0];
    if (!h) return;
    if (attemptNow) h.attemptNow = true;
    h.wake?.();
  }

  /** Removes a waiter; a new head is woken so it takes over the fallback timer (or tries at once). */
  leave(w: Waiter, nextMustAttempt: boolean): void {
    const i = this.queue.indexOf(w);
    if (i === -1) return;
    this.queue.splice(i, 1);
    if (i === 0) this.wakeHead(nextMustAttempt);
  }

  wakeAll(): void {
    for (const w of this.queue) w.wake?.();
  }
}

/** Sleeps until woken, `ms` passes (→ true), or the signal aborts (→ rejects with its reason). */
export function sleep(w: Waiter, ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = (byTimer: boolean) => {
      clearTimeout(timer);
      w.wake = null;
      signal?.removeEventListener("abort", onAbort);
      resolve(byTimer);
    };
    const onAbort = () => {
      clearTimeout(timer);
      w.wake = null;
      reject(signal!.reason);
    };
    const timer = setTimeout(done, ms, true);
    timer.unref();
    w.wake = () => done(false);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
