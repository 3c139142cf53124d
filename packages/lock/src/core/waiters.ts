import type { ReadsFn } from "./backend.js";
import type { Probe } from "./by-message.js";
import type { Clock } from "./clock.js";
import type { EarlyGrant } from "./early.js";

/** A grant a waiter received without an attempt of its own: a release or leave of ours named it `next`. */
export interface HandedGrant {
  token: number;
  reads: Promise<unknown> | undefined;
  /** When the release that granted it was sent: the lease is counted from there. */
  sentAt: number;
  /** Granted before that release's answer (early.ts). */
  early?: EarlyGrant;
  /** Handed over by another process's release, held from its message: the store's claim lasts until then (by-message.ts). */
  claimedUntil?: number;
  /** A semaphore's: permits were still free after this grant, so the next local waiter may try at once. */
  roomLeft?: boolean;
}

/**
 * Where a waiter stands with the store's queue (stores that hand over, see backend.ts `handsOver`):
 * none: not in it; joined: an attempt of its own put it there (it re-checks on a bounded timer, which keeps
 * the entry alive); named: a release or leave in flight names it `next`, and its answer may grant the lock.
 */
export type QueueStanding = "none" | "joined" | "named";

/** The part of an acquire request a handoff needs. */
export interface WaiterRequest {
  resource: string;
  key: string;
  owner: string;
  leaseMs: number;
  reads: ReadsFn | undefined;
  /** Renewed by the watchdog (no explicit leaseMs). */
  watchdog: boolean;
  /** The owner name is a re-entry scope's or the caller's: such a waiter is never handed a lock. */
  bypass: boolean;
}

/** A caller waiting for a lock this process could not get. */
export interface Waiter {
  /** Set while the waiter sleeps; calling it ends the sleep early. */
  wake: (() => void) | null;
  /** The head should try now (not only after a release message or its fallback timer). */
  attemptNow: boolean;
  /** What it asked for. */
  readonly req: WaiterRequest;
  standing: QueueStanding;
  /** Set when a grant reached it while it waited; taken by its loop. */
  handed: HandedGrant | undefined;
  /** Granted, gone or given up: a grant that reaches it now belongs to nobody. */
  done: boolean;
  /** Its own attempt is in flight: it must not be named too (both could grant it the lock). */
  attempting: boolean;
  /** The latest call the store ran while it queued, with the token the store had issued by then (by-message.ts). */
  probe: Probe | undefined;
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
  /** Subscriptions refused in a row (reset when one is made). */
  subscribeFailures = 0;
  /**
   * The local time by which the lock's current lease ends unless renewed, as last learned here: from a grant
   * to a waiter of ours, or from a one-shot attempt's refusal. A head that never tried itself knows no PTTL;
   * a lease that expires announces nothing, so its fallback timer must not sleep past this.
   */
  leaseEndsBy = Number.POSITIVE_INFINITY;

  constructor(
    public inflight: number,
    private readonly clock: Clock,
  ) {}

  get idle(): boolean {
    return this.queue.length === 0 && this.inflight === 0;
  }

  /**
   * Releases in a row that granted the lock to a waiter of ours (not handed to another process): below the
   * localStreak bound a release keeps it local however long other processes queue, then only within this
   * process's time slice (locks-core.ts nameNext).
   */
  localStreak = 0;
  /**
   * What the last release that kept the lock here said of other processes' waiters: how long the first of
   * them had queued (ms; -1 none), as of `othersWaitedAt` (when that release was sent). No process's entry
   * can have queued longer than that plus the time since, so while that stays below the time slice the next
   * release is certain to keep the lock here too, and may grant it early.
   */
  othersWaited: number | undefined;
  othersWaitedAt = 0;
  /** And how many other processes' entries queued then (undefined: not told); the time slice is divided by it. */
  othersQueued: number | undefined;
  /** Owner names handed a lock before their waiter existed (its attempt still in flight). */
  handedEarly: string | undefined;

  onRelease(): void {
    this.epoch++;
    this.wakeHead(true);
  }

  /** The store handed the lock to `owner`: only that waiter looks (it adopts the lock); nobody else wakes. */
  onHandedTo(owner: string): void {
    const w = this.queue.find((x) => x.req.owner === owner);
    if (!w) {
      this.handedEarly = owner;
      return;
    }
    w.attemptNow = true;
    w.wake?.();
  }

  /**
   * A release freed permits owed to these queued owners: only a waiter of ours among them looks (as after any
   * release); nobody else here would be let in before them.
   */
  onOwed(owners: readonly string[]): void {
    const w = this.queue.find((x) => owners.includes(x.req.owner));
    if (!w) return;
    this.epoch++;
    w.attemptNow = true;
    w.wake?.();
  }

  /** Hands a grant to a waiter that waits here; false when it no longer does. */
  grant(w: Waiter, grant: HandedGrant): boolean {
    if (w.done || !this.queue.includes(w)) return false;
    w.handed = grant;
    w.wake?.();
    return true;
  }

  wakeHead(attemptNow: boolean): void {
    const h = this.queue[0];
    if (!h) return;
    if (attemptNow) h.attemptNow = true;
    h.wake?.();
  }

  /**
   * Removes a waiter; a new head takes over the fallback timer. `next` says whether it must try at once: yes
   * when the leaver gave up (it may have been woken by a release it will not use now, and nobody else would
   * look before the new head's fallback timer), or when it won without marking the lock as waited for (its
   * release would not publish); no when its win left the mark, so the release will wake. Then the new head is
   * woken only to bound its sleep, after this turn: woken at once, its loop ran on the handoff's path, ahead
   * of the winner's caller (50–100 µs of each handoff on the bench machine).
   */
  leave(w: Waiter, next: "attempt" | "wait"): void {
    const i = this.queue.indexOf(w);
    if (i === -1) return;
    this.queue.splice(i, 1);
    if (i !== 0) return;
    const head = this.queue[0];
    if (!head) return;
    if (next === "attempt") this.wakeHead(true);
    else
      this.clock.setTimer(() => {
        if (this.queue[0] === head) head.wake?.();
      }, 0);
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
    // Asleep with its connections gone (a server that ended them), a waiting acquire was all the process had
    // left to do, and Node exited with it unsettled: the wait keeps the process alive, as its caller awaits it.
    const letGo = clock.keepAlive?.();
    const end = () => {
      clock.clearTimer(timer);
      letGo?.();
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
