import type { LocksDeltaEvent, LocksEvent, LocksSnapshotEvent } from "../types.js";
import { compact } from "./compact.js";

/** A subscriber this many deltas behind gets them folded into one: its queue never grows past it. */
const MAX_QUEUE = 64;
/** The heartbeat's period while nothing changes. */
export const HEARTBEAT_MS = 10_000;

/** What a subscription needs from the observer feeding it. */
export interface Feed {
  /** Null until the first sync is done; then the current locks whose resource starts with `prefix`. */
  snapshot(prefix: string): LocksSnapshotEvent | null;
  /** Set when the observer failed to start or was closed: the stream ends with it (or quietly when closed). */
  failure(): Error | "closed" | null;
  unsubscribe(sub: Subscription): void;
}

/** One `locks.watch` stream: the deltas it has not sent yet, and a way to wait for the next one. */
export class Subscription {
  private queue: LocksDeltaEvent[] = [];
  private needsSnapshot = true;
  private wake: (() => void) | null = null;

  constructor(readonly prefix: string) {}

  /** A delta for this subscriber (already filtered by its prefix). */
  push(event: LocksDeltaEvent): void {
    if (this.needsSnapshot) return; // the snapshot it is waiting for will include the change
    this.queue.push(event);
    if (this.queue.length >= MAX_QUEUE) this.queue = [compact(this.queue)];
    this.notify();
  }

  notify(): void {
    this.wake?.();
  }

  /**
   * The stream: a snapshot once the observer is ready, then deltas as they come, and a heartbeat after
   * HEARTBEAT_MS without either. Ends when `signal` aborts or the observer closes; throws if it failed.
   */
  async *events(feed: Feed, signal: AbortSignal | undefined): AsyncGenerator<LocksEvent> {
    const onAbort = () => this.notify();
    signal?.addEventListener("abort", onAbort);
    let lastSent = performance.now();
    try {
      while (!signal?.aborted) {
        const failed = feed.failure();
        if (failed === "closed") return;
        if (failed) throw failed;
        let event: LocksEvent | null = null;
        if (this.needsSnapshot) {
          event = feed.snapshot(this.prefix);
          if (event) {
            this.needsSnapshot = false;
            this.queue = [];
          }
        } else {
          event = this.queue.shift() ?? null;
        }
        if (event) {
          yield event;
          lastSent = performance.now();
          continue;
        }
        const idleMs = performance.now() - lastSent;
        if (!this.needsSnapshot && idleMs >= HEARTBEAT_MS) {
          yield { kind: "heartbeat", at: Date.now() };
          lastSent = performance.now();
          continue;
        }
        await this.sleep(this.needsSnapshot ? HEARTBEAT_MS : HEARTBEAT_MS - idleMs);
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.wake = null;
      feed.unsubscribe(this);
    }
  }

  /** Until notify() or `ms` pass; the timer is cleared either way. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake?.(), ms);
      timer.unref();
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }
}
