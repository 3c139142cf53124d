import {
  InvalidOptionError,
  LockLostError,
  LockReleasedError,
  LocksClosedError,
  type LostReason,
} from "../errors.js";
import type { LockEvent } from "../events.js";
import type { LockHandle, ReleasedAfter, ReleaseResult } from "../types.js";
import type { LockBackend, ReleaseListener, ReleaseReply, WriteFn } from "./backend.js";
import type { Clock } from "./clock.js";
import type { EarlyGrant } from "./early.js";
import { type Named, nextWaiterOf } from "./named.js";
import type { QueueStanding } from "./waiters.js";

/** What a handle needs from the Locks that made it. */
export interface HandleHost {
  readonly backend: LockBackend;
  readonly closed: boolean;
  readonly clock: Clock;
  emit: ((e: LockEvent) => void) | undefined;
  unwatch(h: Handle): void;
  /** The watchdog looks at the handle again (its renewal may be due): an early grant was answered. */
  rewatch(h: Handle): void;
  /**
   * The hold is released (held or lost until then). For a hold under its own owner name: whether re-entries
   * of that owner may still count in the store's hash, so that its release may only decrement.
   */
  holdEnded(h: Handle): boolean;
  /** A re-entry's release was answered, or not sent (superseded): its count is out of the store's hash. */
  reentryAnswered(h: Handle): void;
  /** A release call failed: retry it in the background if it never reached Redis. */
  releaseFailed(h: Handle, err: unknown): void;
  /** A newer fresh grant to the same owner replaced this handle's lock: its release must not reach Redis. */
  superseded(h: Handle): boolean;
  /** The waiter of this process a release may hand the lock to (locks-core.ts), and its call's answer. */
  nameNext(resource: string): Named | undefined;
  /** Grants the named waiter the lock as this handle's release is sent, when its answer is certain. */
  grantEarly(h: Handle, named: Named): boolean;
  /**
   * Makes an early grant's release after the I/O that follows (Clock.afterIo), at close(), or when the hold it
   * grants needs its answer (EarlyGrant.hurry), whichever comes first.
   */
  sendAfterIo<T>(send: () => Promise<T>, early: EarlyGrant): Promise<T>;
  settleNamed(named: Named | undefined, reply: ReleaseReply | undefined, queued: QueueStanding): void;
  /** A release of this hold was answered (after settleNamed). */
  releaseAnswered(resource: string, reply: ReleaseReply): void;
}

/** held → lost (renewal refused, deadline passed, or release found another owner) | released. */
export type HandleState = "held" | "lost" | "released";

/** By reply code (backend.ts ReleaseReply): a handoff is a release too. */
const RESULTS: ReleaseResult[] = ["not-owner", "decremented", "released", "released", "released"];

export interface HandleInit {
  resource: string;
  key: string;
  owner: string;
  token: number | null;
  count: number;
  leaseMs: number;
  /** Renewed by the watchdog (no explicit leaseMs). */
  watchdog: boolean;
  /** When the winning request was sent: the lease is counted from there. */
  sentAt: number;
  /** The owner name was made for this acquisition (not a re-entry scope's, not the caller's). */
  ownOwner: boolean;
  /** Granted by a release of ours not yet answered (early.ts). */
  early?: EarlyGrant;
  /** Held from another process's handoff message: the store's claim on it lasts until then (by-message.ts). */
  claimedUntil?: number;
}

/**
 * One acquisition (a re-entry is its own handle). Watchdog state lives here so the scheduler needs
 * no per-lock timer; the AbortController is made only if someone reads `signal`.
 */
export class Handle implements LockHandle, ReleaseListener {
  state: HandleState = "held";
  readonly resource: string;
  readonly key: string;
  readonly owner: string;
  readonly token: number | null;
  readonly count: number;
  readonly leaseMs: number;
  readonly watchdog: boolean;
  readonly ownOwner: boolean;
  /** When the winning request was sent (for a hold taken from a handoff message: when it was taken), for heldMs. */
  readonly acquiredAt: number;
  /** Held from another process's handoff message, without an attempt (by-message.ts). */
  readonly byMessage: boolean;
  /** Local deadline: the lock surely exists until then (measured from before the request was sent). */
  deadline: number;
  /** The lease minus the backend's validity margin: how long after a request the lock surely exists. */
  readonly validMs: number;
  nextRenewAt: number;
  /** A watchdog batch takes the handle along when it is due within this many ms (renewals coalesce). */
  renewWindowMs: number;
  renewing = false;
  lostError: LockLostError | undefined;
  reads: Promise<unknown> | undefined;
  /**
   * Granted early (early.ts) and not yet answered: the releasing hold's owner, which the store still names until
   * that release runs. The handle holds under that hold's deadline meanwhile.
   */
  handedBy: string | undefined;
  /** The early grant's answer, applied; its own renew and release wait for it, so they reach the store after. */
  private pending: Promise<void> | undefined;
  /** The early grant that made this hold, while its answer is pending. */
  private grantedBy: EarlyGrant | undefined;
  /** Whether the handle still counted as held when its release was sent, and that release's result once heard. */
  private heldAtRelease = false;
  /** Set at release: re-entries of this owner may still count in the store's hash (locks-core.ts openReentries). */
  sharesCount = false;
  private releaseResult: ReleaseResult | undefined;
  private ac: AbortController | undefined;

  constructor(
    private readonly host: HandleHost,
    init: HandleInit,
  ) {
    this.resource = init.resource;
    this.key = init.key;
    this.owner = init.owner;
    this.token = init.token;
    this.count = init.count;
    this.leaseMs = init.leaseMs;
    this.watchdog = init.watchdog;
    this.ownOwner = init.ownOwner;
    // Held from a message, it is counted as held from now; its claim is counted from the probe (below).
    this.acquiredAt = init.claimedUntil === undefined ? init.sentAt : host.clock.now();
    this.validMs = init.leaseMs - (host.backend.validityMarginMs?.(init.leaseMs) ?? 0);
    this.deadline = init.sentAt + this.validMs;
    this.nextRenewAt = init.watchdog ? init.sentAt + init.leaseMs / 3 : Number.POSITIVE_INFINITY;
    this.renewWindowMs = init.leaseMs / 6;
    const { early, claimedUntil } = init;
    this.byMessage = claimedUntil !== undefined;
    if (claimedUntil !== undefined) {
      // The store holds it under the handoff's claim lease (bounded from below by the probe) until a renewal
      // raises that to the lease: renew halfway to the claim's end, on time rather than with a batch. Not the
      // lease counted from the probe: that refusal may be older than the whole lease (a waiter that slept on
      // another waiter's claim), and the hold would be born past its deadline.
      const claimMs = claimedUntil - init.sentAt;
      this.deadline = claimedUntil - (host.backend.validityMarginMs?.(claimMs) ?? 0);
      this.nextRenewAt = Math.min(this.nextRenewAt, init.sentAt + claimMs / 2);
      this.renewWindowMs = 0;
    }
    if (early) {
      this.deadline = Math.min(this.deadline, early.until);
      this.handedBy = early.from;
      this.grantedBy = early;
      this.pending = early.answer.then((granted) => this.answeredEarly(granted));
    }
  }

  /** Waits for the answer of the release that granted this handle early, which goes out now if put off. */
  private answerOfGrant(): Promise<void> | undefined {
    this.grantedBy?.hurry();
    return this.pending;
  }

  /** The answer of the release that granted this handle early. */
  private answeredEarly(granted: boolean): void {
    this.pending = undefined;
    this.grantedBy = undefined;
    this.handedBy = undefined;
    if (!granted) this.lose("handoff-refused");
    else if (this.state === "held") {
      this.deadline = Math.max(this.deadline, this.acquiredAt + this.validMs);
      // The watchdog left it alone while the grant was unanswered; its renewal may be due already.
      this.host.rewatch(this);
    }
  }

  /**
   * Granted early and not yet answered: the store still names the releasing hold's owner, so a renewal sent now
   * would be refused (the release that names this one may be late: retried on a Cluster's TRYAGAIN) and lose a
   * hold that is ours. The watchdog waits for the answer, as renew() does; the hold keeps the releasing hold's
   * deadline meanwhile.
   */
  get awaitingGrant(): boolean {
    return this.pending !== undefined;
  }

  get signal(): AbortSignal {
    this.loseIfPastDeadline();
    if (!this.ac) {
      this.ac = new AbortController();
      if (this.lostError) this.ac.abort(this.lostError);
    }
    return this.ac.signal;
  }

  isHeld(): boolean {
    this.loseIfPastDeadline();
    return this.state === "held";
  }

  /**
   * What the watchdog's timer would find: after a pause, Node runs the caller's timers that fell due before
   * it, so a look at the handle must not wait for that tick to see the lock lost.
   */
  private loseIfPastDeadline(): void {
    if (this.state === "held" && this.host.clock.now() >= this.deadline)
      this.lose(this.watchdog ? "deadline" : "expired");
  }

  /** For the re-entry scope: held and not past its deadline. */
  get live(): boolean {
    return this.isHeld();
  }

  async renew(): Promise<boolean> {
    this.usable();
    if (this.pending) await this.answerOfGrant();
    if (this.state !== "held") return false;
    const sentAt = this.host.clock.now();
    const ok = await this.host.backend.renew(this.key, this.owner, this.leaseMs);
    this.renewed(ok, sentAt);
    return ok && this.state === "held";
  }

  /** Applies one renewal answer (from renew() or the watchdog's batch). */
  renewed(ok: boolean, sentAt: number): void {
    if (this.state !== "held") return;
    if (!ok) {
      this.lose("renew-refused");
      return;
    }
    if (sentAt + this.validMs > this.deadline) this.deadline = sentAt + this.validMs;
    if (this.watchdog) this.nextRenewAt = sentAt + this.leaseMs / 3;
    this.renewWindowMs = this.leaseMs / 6;
    this.host.emit?.({ type: "renewed", resource: this.resource, owner: this.owner, leaseMs: this.leaseMs });
  }

  lose(reason: LostReason): void {
    if (this.state !== "held") return;
    this.state = "lost";
    this.host.unwatch(this);
    this.noteLost(reason);
  }

  get released(): boolean {
    return this.state === "released";
  }

  async release(): Promise<ReleaseResult> {
    this.usable();
    // Granted early: this release must reach the store after the one that grants this hold.
    if (this.pending) await this.answerOfGrant();
    if (this.state === "released") throw new LockReleasedError(this.resource);
    const wasHeld = this.markReleased();
    if (this.host.superseded(this)) {
      if (!this.ownOwner) this.host.reentryAnswered(this);
      return this.releasedAs([0], wasHeld);
    }
    this.heldAtRelease = wasHeld;
    const named = this.host.nameNext(this.resource);
    // The next holder may start now: say this hold ended before it is granted (events keep the store's order).
    const early = wasHeld && named !== undefined && this.host.grantEarly(this, named);
    if (early) this.releaseResult = this.releasedAs([2], wasHeld);
    const send = () => this.host.backend.release(...this.releaseArgs(named));
    // An early grant's release goes out once the new holder's first commands are answered (usually): Redis
    // answers what it read in one go together, so a release that came with them held their answers for its
    // run. The lock stays in this process until this hold's deadline whichever way the release goes (early.ts).
    const reply = early ? this.host.sendAfterIo(send, named!.early!) : send();
    return this.answered(reply, named, early);
  }

  /** The release's answer: settles the waiter it named, and a failure starts the background retry. */
  private async answered(
    sent: Promise<ReleaseReply>,
    named: Named | undefined,
    early = false,
  ): Promise<ReleaseResult> {
    let reply: ReleaseReply;
    try {
      reply = await sent;
    } catch (err) {
      this.host.settleNamed(named, undefined, "none");
      this.host.releaseFailed(this, err);
      throw err;
    }
    this.host.settleNamed(named, reply, "none");
    this.host.releaseAnswered(this.resource, reply);
    if (!this.ownOwner) this.host.reentryAnswered(this);
    if (early && reply[0] !== 4) {
      // Announced as released when the early grant was made; the store says otherwise.
      this.releaseResult = RESULTS[reply[0]]!;
      if (this.releaseResult === "not-owner" && this.heldAtRelease) this.noteLost("not-owner-at-release");
    }
    return this.releaseOutcome(reply);
  }

  /**
   * The release's outcome is applied (and its event emitted) where the store delivers the answer, so it keeps
   * the store's order against the next owner's grant; `releaseOutcome` applies it from the promise if the
   * store did not call this.
   */
  releaseReplied(reply: ReleaseReply): void {
    this.releaseResult ??= this.releasedAs(reply, this.heldAtRelease);
  }

  private releaseOutcome(reply: ReleaseReply): ReleaseResult {
    this.releaseReplied(reply);
    return this.releaseResult!;
  }

  async releaseAfter<T>(write: WriteFn<T>): Promise<ReleasedAfter<T>> {
    this.usable();
    if (typeof write !== "function") throw new InvalidOptionError("write", write, "a function");
    const { backend } = this.host;
    if (!backend.releaseAfter)
      throw new InvalidOptionError(
        "releaseAfter",
        "called",
        "a mutex on Redis or a Redis Cluster (not a semaphore, read-write lock, Redlock or PostgreSQL lock)",
      );
    if (this.pending) await this.answerOfGrant();
    if (this.state === "released") throw new LockReleasedError(this.resource);
    const wasHeld = this.markReleased();
    if (this.host.superseded(this)) {
      if (!this.ownOwner) this.host.reentryAnswered(this);
      const result = this.releasedAs([0], wasHeld);
      return { result, write: { status: "rejected", reason: this.lostError } };
    }
    this.heldAtRelease = wasHeld;
    const named = this.host.nameNext(this.resource);
    const r = backend.releaseAfter(write, ...this.releaseArgs(named));
    const result = await this.answered(r.reply, named);
    return { result, write: await r.write };
  }

  /** What the store's release (and releaseAfter, after its write) is called with for this hold. */
  private releaseArgs(named: Named | undefined): Parameters<LockBackend["release"]> {
    return [
      this.resource,
      this.key,
      this.owner,
      this.leaseMs,
      this.token,
      this,
      named && nextWaiterOf(named),
    ];
  }

  /** Returns whether the handle still counted as held (not lost) when its release was sent. */
  private markReleased(): boolean {
    const wasHeld = this.state === "held";
    if (wasHeld) this.host.unwatch(this);
    this.state = "released";
    this.sharesCount = this.host.holdEnded(this);
    return wasHeld;
  }

  private releasedAs([code]: ReleaseReply, wasHeld: boolean): ReleaseResult {
    const result = RESULTS[code]!;
    this.host.emit?.({
      type: "released",
      resource: this.resource,
      owner: this.owner,
      heldMs: this.host.clock.now() - this.acquiredAt,
      result,
    });
    // Another owner has the key (or nobody does): this holder was not protected up to its release,
    // whatever its local deadline said. The caller must hear it (withLock rejects with lostError).
    if (result === "not-owner" && wasHeld) this.noteLost("not-owner-at-release");
    return result;
  }

  private noteLost(reason: LostReason): void {
    this.lostError = new LockLostError(this.resource, this.owner, reason);
    this.ac?.abort(this.lostError);
    this.host.emit?.({
      type: "lost",
      resource: this.resource,
      owner: this.owner,
      reason,
      heldMs: this.host.clock.now() - this.acquiredAt,
    });
  }

  /** The answer of a background retry (late-release.ts) after release() had failed to reach Redis. */
  releasedLate([code]: ReleaseReply): void {
    this.host.emit?.({
      type: "released",
      resource: this.resource,
      owner: this.owner,
      heldMs: this.host.clock.now() - this.acquiredAt,
      result: RESULTS[code]!,
      late: true,
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.state !== "released" && !this.host.closed) await this.release();
  }

  private usable(): void {
    if (this.state === "released") throw new LockReleasedError(this.resource);
    if (this.host.closed) throw new LocksClosedError();
  }
}
