import type { LockBackend, ReleaseReply } from "../backend.js";

/** What a late release needs from its handle. */
export interface LateHandle {
  readonly resource: string;
  readonly key: string;
  readonly owner: string;
  readonly leaseMs: number;
  /** The local deadline: Redis frees the lock by then on its own. */
  readonly deadline: number;
  releasedLate(reply: ReleaseReply): void;
}

/**
 * Releases whose call never got a reply (Redis unreachable), retried in the background so a lock that
 * survived the outage (AOF) does not block everyone until its lease runs out. One unref'd timer per Locks.
 * Retries stop at the first reply of any kind, at the handle's local deadline, and on close().
 * The release script is owner-checked, so a late attempt can never delete or decrement another owner's lock:
 * if the lease ran out and someone else took it, the answer is not-owner.
 */
export class LateReleases {
  /** Handle → time of its next attempt; absent while an attempt is in flight. */
  private readonly due = new Map<LateHandle, number>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private stopped = false;

  constructor(private readonly backend: LockBackend) {}

  get size(): number {
    return this.due.size;
  }

  add(h: LateHandle): void {
    if (!this.stopped) this.schedule(h);
  }

  stop(): void {
    this.stopped = true;
    this.due.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private schedule(h: LateHandle): void {
    const gap = Math.min(200, h.leaseMs / 10);
    const at = performance.now() + gap * (0.75 + Math.random() * 0.5);
    if (at >= h.deadline) return;
    this.due.set(h, at);
    if (at < this.timerAt) this.arm(at);
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - performance.now()));
    this.timer.unref();
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [h, at] of this.due) {
      if (at <= now) {
        this.due.delete(h);
        void this.attempt(h);
      } else if (at < next) next = at;
    }
    if (next < this.timerAt) this.arm(next);
  }

  private async attempt(h: LateHandle): Promise<void> {
    let reply: ReleaseReply;
    try {
      reply = await this.backend.release(h.resource, h.key, h.owner, h.leaseMs);
    } catch (err) {
      // A reply error is Redis's answer too: only a call that never reached Redis is worth another try.
      if (!this.stopped && this.backend.noReply?.(err)) this.schedule(h);
      return;
    }
    if (!this.stopped) h.releasedLate(reply);
  }
}
