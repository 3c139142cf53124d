import type { LockBackend, ReleaseReply } from "./backend.js";
import { type Clock, OneTimer } from "./clock.js";

/** What a late release needs from its handle. */
export interface LateHandle {
  readonly resource: string;
  readonly key: string;
  readonly owner: string;
  readonly leaseMs: number;
  /** The token the hold was granted with (the release script refuses it once the key was granted afresh). */
  readonly token: number | null;
  /** The local deadline: Redis frees the lock by then on its own. */
  readonly deadline: number;
  /**
   * A queued waiter that gave up: its leave, not a release, is retried (its entry, and a lock handed to it
   * meanwhile, would hold everyone else up for a queue lease).
   */
  readonly leave?: true;
  releasedLate(reply: ReleaseReply): void;
}

/**
 * Releases (and leaves of the waiter queue) whose call never got a reply (Redis unreachable), retried in the
 * background so a lock that survived the outage (AOF) does not block everyone until its lease runs out. One
 * unref'd timer per Locks.
 * Retries stop at the first reply of any kind, at the handle's local deadline, and on close().
 * The release script is owner-checked, so a late attempt can never delete or decrement another owner's lock:
 * if the lease ran out and someone else took it, the answer is not-owner. The core retries only releases
 * that no other local hold of the same owner shares (see LocksCore.releaseFailed).
 */
export class LateReleases {
  /** Handle → time of its next attempt; absent while an attempt is in flight. */
  private readonly due = new Map<LateHandle, number>();
  private readonly timer: OneTimer;
  private stopped = false;

  constructor(
    private readonly backend: LockBackend,
    private readonly clock: Clock,
    private readonly random: () => number,
    /** A release (not a leave) was answered. */
    private readonly released: (resource: string, reply: ReleaseReply) => void = () => {},
  ) {
    this.timer = new OneTimer(clock, () => this.tick());
  }

  get size(): number {
    return this.due.size;
  }

  add(h: LateHandle): void {
    if (!this.stopped) this.schedule(h);
  }

  stop(): void {
    this.stopped = true;
    this.due.clear();
    this.timer.disarm();
  }

  private schedule(h: LateHandle): void {
    const gap = Math.min(200, h.leaseMs / 10);
    const at = this.clock.now() + gap * (0.75 + this.random() * 0.5);
    if (at >= h.deadline) return;
    this.due.set(h, at);
    this.timer.armBy(at);
  }

  private tick(): void {
    const now = this.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [h, at] of this.due) {
      if (at <= now) {
        this.due.delete(h);
        void this.attempt(h);
      } else if (at < next) next = at;
    }
    this.timer.armBy(next);
  }

  private async attempt(h: LateHandle): Promise<void> {
    let reply: ReleaseReply;
    try {
      reply = h.leave
        ? await this.backend.leave!(h.resource, h.key, h.owner, undefined)
        : await this.backend.release(h.resource, h.key, h.owner, h.leaseMs, h.token);
    } catch (err) {
      // A reply error is Redis's answer too: only a call that never reached Redis is worth another try.
      if (!this.stopped && this.backend.noReply?.(err)) this.schedule(h);
      return;
    }
    if (this.stopped) return;
    h.releasedLate(reply);
    if (!h.leave) this.released(h.resource, reply);
  }
}
