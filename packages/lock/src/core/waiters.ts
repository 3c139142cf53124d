import type { Clock } from "./clock.js";

/** A caller waiting for a lock this process could not get. */
export interface Waiter {
  /** Set while the waiter sleeps; calling it ends the sleep early. */
  wake: (() => void) | null;
  /** The head should try now (not only after a release message or its fallback timer). */
  attemptNow: boolean;
}

/** Whether release messages for the gate's resource reach this process yet. */
export type SubscriptionState = "none" | "subscribing" | "subscribed";

/**
 * Per-resource waiting state of one Locks: a FIFO of local waiters of which only the head talks to Redis,
 * a count of attempts in flight outside the queue, and the release-message epoch. A release message wakes
 * only the head (no thundering herd); an attempt that was in flight when a message arrived sees the epoch
 * move and retries at once instead of sleeping through the release.
 */
export class Gate {
  readonly queue: Waiter[] = [];
  epoch = 0;
  subscription: SubscriptionState = "none";
  /**
   * When a waiter of ours was last granted the lock: the local time by which that grant's lease ends unless
   * renewed. A head that never tried itself knows no PTTL; a lease that expires announces nothing, so its
   * fallback timer must not sleep past this.
   */
  grantEndsBy = Number.POSITIVE_INFINITY;

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

  /**
   * Removes a waiter; a new head is woken so it takes over the fallback timer. `next` says whether it must
   * try at once: yes when the leaver gave up (it may have been woken by a release it will not use now, and
   * nobody else would look before the new head's fallback timer), or when it won without marking the lock
   * as waited for (its release would not publish); no when its win left the mark, so the release will wake.
   */
  leave(w: Waiter, next: "attempt" | "wait"): void {
    const i = this.queue.indexOf(w);
    if (i === -1) return;
    this.queue.splice(i, 1);
    if (i === 0) this.wakeHead(next === "attempt");
  }

  wakeAll(): void {
    for (const w of this.queue) w.wake?.();
  }
}

export type WakeCause = "timer" | "woken";

/** Sleeps until woken or `ms` passes; rejects with the signal's reason when it aborts. */
export function sleep(
  clock: Clock,
  w: Waiter,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<WakeCause> {
  return new Promise<WakeCause>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const end = () => {
      clock.clearTimer(timer);
      w.wake = null;
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      end();
      reject(signal!.reason);
    };
    const timer = clock.setTimer(() => {
      end();
      resolve("timer");
    }, ms);
    w.wake = () => {
      end();
      resolve("woken");
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
