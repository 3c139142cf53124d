import type { LockBackend } from "./backend.js";
import { type Clock, OneTimer } from "./clock.js";
import type { Handle } from "./handle.js";

/**
 * One scheduler per Locks, one unref'd timer. It renews every watchdog handle about every lease/3
 * (a handle due within lease/6 rides along with the batch, so renewals coalesce into one script call),
 * and declares a handle lost once its local deadline passes without a successful renewal.
 * Handles with an explicit lease are tracked only for that deadline.
 */
export class Scheduler {
  private readonly handles = new Set<Handle>();
  private readonly timer: OneTimer;
  private stopped = false;

  constructor(
    private readonly backend: LockBackend,
    private readonly clock: Clock,
  ) {
    this.timer = new OneTimer(clock, () => this.tick());
  }

  get size(): number {
    return this.handles.size;
  }

  add(h: Handle): void {
    if (this.stopped) return;
    this.handles.add(h);
    // An early grant's borrowed deadline, or a claim's, may come before its first renewal.
    this.timer.armBy(h.watchdog ? Math.min(h.nextRenewAt, h.deadline) : h.deadline);
  }

  remove(h: Handle): void {
    this.handles.delete(h);
    if (this.handles.size === 0) this.timer.disarm();
  }

  /** The lease of a held lock, for list(). */
  leaseOf(key: string, owner: string): number | undefined {
    for (const h of this.handles) if (h.key === key && h.owner === owner) return h.leaseMs;
    return undefined;
  }

  /** The held handles of one key and owner. */
  holdsOf(key: string, owner: string): Handle[] {
    return [...this.handles].filter((h) => h.key === key && h.owner === owner);
  }

  /** True when a held handle other than `h` has the same key and owner (a re-entry of it). */
  hasOtherHold(h: Handle): boolean {
    for (const o of this.handles) if (o !== h && o.key === h.key && o.owner === h.owner) return true;
    return false;
  }

  /**
   * At close(): no more renewals and no new handles, but the held ones are still declared lost at their local
   * deadline, so their signals abort when the lock may be another's (close() does not release them).
   */
  stop(): void {
    this.stopped = true;
    this.rearm();
  }

  private tick(): void {
    const now = this.clock.now();
    const batch: Handle[] = [];
    for (const h of this.handles) {
      if (now >= h.deadline) h.lose(h.watchdog ? "deadline" : "expired");
      else if (this.renews(h) && now >= h.nextRenewAt - h.renewWindowMs) {
        h.renewing = true;
        batch.push(h);
      }
    }
    if (batch.length > 0) void this.renew(batch);
    this.rearm();
  }

  private renews(h: Handle): boolean {
    return h.watchdog && !h.renewing && !h.awaitingGrant && !this.stopped;
  }

  private rearm(): void {
    let next = Number.POSITIVE_INFINITY;
    for (const h of this.handles) {
      const due = this.renews(h) ? Math.min(h.nextRenewAt, h.deadline) : h.deadline;
      if (due < next) next = due;
    }
    this.timer.armBy(next);
  }

  private async renew(batch: Handle[]): Promise<void> {
    const sentAt = this.clock.now();
    let answers: (boolean | undefined)[] | undefined;
    try {
      answers = await this.backend.renewMany(
        batch.map((h) => ({ key: h.key, owner: h.owner, leaseMs: h.leaseMs })),
      );
    } catch {
      // Redis unreachable: try again soon; the local deadline decides when the lock counts as lost.
    }
    const now = this.clock.now();
    batch.forEach((h, i) => {
      h.renewing = false;
      const ok = answers?.[i];
      if (ok !== undefined) h.renewed(ok, sentAt);
      else h.nextRenewAt = now + Math.min(h.leaseMs / 10, 1000, Math.max(0, (h.deadline - now) / 2));
    });
    this.rearm();
  }
}
