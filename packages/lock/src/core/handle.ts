import type { LockBackend, ReleaseReply, WriteFn } from "../backend.js";
import {
  InvalidOptionError,
  LockLostError,
  LockReleasedError,
  LocksClosedError,
  type LostReason,
} from "../errors.js";
import type { LockEvent } from "../events.js";
import type { LockHandle, ReleasedAfter, ReleaseResult } from "../types.js";

/** What a handle needs from the Locks that made it. */
export interface HandleHost {
  readonly backend: LockBackend;
  readonly closed: boolean;
  emit: ((e: LockEvent) => void) | undefined;
  unwatch(h: Handle): void;
  /** A release call failed: retry it in the background if it never reached Redis. */
  releaseFailed(h: Handle, err: unknown): void;
}

const HELD = 0;
const LOST = 1;
const RELEASED = 2;
const RESULTS: ReleaseResult[] = ["not-owner", "decremented", "released"];

/**
 * One acquisition (a re-entry is its own handle). Watchdog state lives here so the scheduler needs
 * no per-lock timer; the AbortController is made only if someone reads `signal`.
 */
export class Handle implements LockHandle {
  state = HELD;
  /** Local deadline: the lock surely exists until then (measured from before the request was sent). */
  deadline: number;
  /** The lease minus the backend's validity margin: how long after a request the lock surely exists. */
  readonly validMs: number;
  nextRenewAt: number;
  renewing = false;
  lostError: LockLostError | undefined;
  reads: Promise<unknown> | undefined;
  private ac: AbortController | undefined;

  constructor(
    private readonly host: HandleHost,
    readonly resource: string,
    readonly key: string,
    readonly owner: string,
    readonly token: number | null,
    readonly count: number,
    readonly leaseMs: number,
    /** Renewed by the watchdog (no explicit leaseMs). */
    readonly watchdog: boolean,
    readonly acquiredAt: number,
  ) {
    this.validMs = leaseMs - (host.backend.validityMarginMs?.(leaseMs) ?? 0);
    this.deadline = acquiredAt + this.validMs;
    this.nextRenewAt = watchdog ? acquiredAt + leaseMs / 3 : Number.POSITIVE_INFINITY;
  }

  get signal(): AbortSignal {
    if (!this.ac) {
      this.ac = new AbortController();
      if (this.lostError) this.ac.abort(this.lostError);
    }
    return this.ac.signal;
  }

  isHeld(): boolean {
    return this.state === HELD && performance.now() < this.deadline;
  }

  async renew(): Promise<boolean> {
    this.usable();
    if (this.state !== HELD) return false;
    const sentAt = performance.now();
    const ok = await this.host.backend.renew(this.key, this.owner, this.leaseMs);
    this.renewed(ok, sentAt);
    return ok && this.state === HELD;
  }

  /** Applies one renewal answer (from renew() or the watchdog's batch). */
  renewed(ok: boolean, sentAt: number): void {
    if (this.state !== HELD) return;
    if (!ok) {
      this.lose("renew-refused");
      return;
    }
    if (sentAt + this.validMs > this.deadline) this.deadline = sentAt + this.validMs;
    if (this.watchdog) this.nextRenewAt = sentAt + this.leaseMs / 3;
    this.host.emit?.({ type: "renewed", resource: this.resource, owner: this.owner, leaseMs: this.leaseMs });
  }

  lose(reason: LostReason): void {
    if (this.state !== HELD) return;
    this.state = LOST;
    this.host.unwatch(this);
    this.lostError = new LockLostError(this.resource, this.owner, reason);
    this.ac?.abort(this.lostError);
    this.host.emit?.({
      type: "lost",
      resource: this.resource,
      owner: this.owner,
      reason,
      heldMs: performance.now() - this.acquiredAt,
    });
  }

  get released(): boolean {
    return this.state === RELEASED;
  }

  async release(): Promise<ReleaseResult> {
    this.usable();
    this.markReleased();
    let reply: ReleaseReply;
    try {
      reply = await this.host.backend.release(this.resource, this.key, this.owner, this.leaseMs);
    } catch (err) {
      this.host.releaseFailed(this, err);
      throw err;
    }
    return this.releasedAs(reply);
  }

  async releaseAfter<T>(write: WriteFn<T>): Promise<ReleasedAfter<T>> {
    this.usable();
    if (typeof write !== "function") throw new InvalidOptionError("write", write, "a function");
    const { backend } = this.host;
    if (!backend.releaseAfter) throw new InvalidOptionError("releaseAfter", "called", "a lock on Redis");
    this.markReleased();
    const r = backend.releaseAfter(write, this.resource, this.key, this.owner, this.leaseMs);
    let reply: ReleaseReply;
    try {
      reply = await r.reply;
    } catch (err) {
      this.host.releaseFailed(this, err);
      throw err;
    }
    // The release's answer first: its event must not trail the next owner's "acquired".
    const result = this.releasedAs(reply);
    return { result, write: await r.write };
  }

  private markReleased(): void {
    if (this.state === HELD) this.host.unwatch(this);
    this.state = RELEASED;
  }

  private releasedAs([code]: ReleaseReply): ReleaseResult {
    const result = RESULTS[code]!;
    this.host.emit?.({
      type: "released",
      resource: this.resource,
      owner: this.owner,
      heldMs: performance.now() - this.acquiredAt,
      result,
    });
    return result;
  }

  /** The answer of a background retry (late-release.ts) after release() had failed to reach Redis. */
  releasedLate([code]: ReleaseReply): void {
    this.host.emit?.({
      type: "released",
      resource: this.resource,
      owner: this.owner,
      heldMs: performance.now() - this.acquiredAt,
      result: RESULTS[code]!,
      late: true,
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.state !== RELEASED && !this.host.closed) await this.release();
  }

  private usable(): void {
    if (this.state === RELEASED) throw new LockReleasedError(this.resource);
    if (this.host.closed) throw new LocksClosedError();
  }
}
