import type { LockBackend, OnReleaseMessage, ReleaseSubscriber } from "./backend.js";

/**
 * Reference-counted subscriptions over the one shared subscriber (made on first use). Counting matters:
 * a resource's gate can be dropped and re-made while its UNSUBSCRIBE is still queued, and commands on the
 * subscriber connection run in order, so only the 1 → 0 and 0 → 1 transitions send anything.
 */
export class Subscriptions {
  private sub: ReleaseSubscriber | undefined;
  private readonly refs = new Map<string, { n: number; ready: Promise<boolean> }>();
  private closed = false;

  constructor(
    private readonly backend: LockBackend,
    private readonly onRelease: OnReleaseMessage,
    /** The subscriber came back after losing its connection: messages sent meanwhile were missed. */
    private readonly onResubscribed: () => void,
  ) {}

  /** Resolves true when messages flow, false when the subscription failed (never rejects). */
  add(resource: string): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    const ref = this.refs.get(resource);
    if (ref) {
      ref.n++;
      return ref.ready;
    }
    this.sub ??= this.backend.createSubscriber(this.onRelease, this.onResubscribed);
    const ready = this.sub.subscribe(resource).then(
      () => true,
      () => false,
    );
    this.refs.set(resource, { n: 1, ready });
    return ready;
  }

  remove(resource: string): void {
    const ref = this.refs.get(resource);
    if (!ref) return;
    if (--ref.n > 0) return;
    this.refs.delete(resource);
    this.sub?.unsubscribe(resource);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.refs.clear();
    const s = this.sub;
    this.sub = undefined;
    await s?.close();
  }
}
