import type { LockBackend } from "../backend.js";
import type { Handle } from "./handle.js";

/**
 * One scheduler per Locks, one unref'd timer. It renews every watchdog handle about every lease/3
 * (a handle due within lease/6 rides along with the batch, so renewals coalesce into one script call),
 * and declares a handle lost once its local deadline passes without a successful renewal.
 * Handles with an explicit lease are tracked only for that deadline.
 */
export class Scheduler {
  private readonly handles = new Set<Handle>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private stopped = false;

  constructor(private readonly backend: LockBackend) {}

  get size(): number {
    return this.handles.size;
  }

  add(h: Handle): void {
    this.handles.add(h);
    const due = h.watchdog ? h.nextRenewAt : h.deadline;
    if (due < this.timerAt) this.arm(due);
  }

  remove(h: Handle): void {
    this.handles.delete(h);
    if (this.handles.size === 0) this.disarm();
  }

  /** The lease of a held lock, for list(). */
  leaseOf(key: string, owner: string): number | undefined {
    for (const h of this.handles) if (h.key === key && h.owner === owner) return h.leaseMs;
    return undefined;
  }

  stop(): void {
    this.stopped = true;
    this.handles.clear();
    this.disarm();
  }

  private arm(at: number): void {
    if (this.stopped || at === Number.POSITIVE_INFINITY) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - performance.now()));
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    const batch: Handle[] = [];
    for (const h of this.handles) {
      if (now >= h.deadline) h.lose(h.watchdog ? "deadline" : "expired");
      else if (h.watchdog && !h.renewing && now >= h.nextRenewAt - h.leaseMs / 6) {
        h.renewing = true;
        batch.push(h);
      }
    }
    if (batch.length > 0) void this.renew(batch);
    this.rearm();
  }

  private rearm(): void {
    let next = Number.POSITIVE_INFINITY;
    for (const h of this.handles) {
      const due = h.watchdog && !h.renewing ? Math.min(h.nextRenewAt, h.deadline) : h.deadline;
      if (due < next) next = due;
    }
    if (next < this.timerAt) this.arm(next);
  }

  private async renew(batch: Handle[]): Promise<void> {
    const sentAt = performance.now();
    let answers: (boolean | undefined)[] | undefined;
    try {
      answers = await this.backend.renewMany(
        batch.map((h) => ({ key: h.key, owner: h.owner, leaseMs: h.leaseMs })),
      );
    } catch {
      // Redis unreachable: try again soon; the local deadline decides when the lock counts as lost.
    }
    const now = performance.now();
    batch.forEach((h, i) => {
      h.renewing = false;
      const ok = answers?.[i];
      if (ok !== undefined) h.renewed(ok, sentAt);
      else h.nextRenewAt = now + Math.min(h.leaseMs / 10, 1000);
    });
    if (!this.stopped) this.rearm();
  }
}
