import type { Config } from "../config.js";
import { LocksClosedError, LockTimeoutError } from "../errors.js";
import { type Attempt, attemptWithin, type GaveUpReason, mayHaveRun } from "./attempt.js";
import type { AcquireReply, LockBackend, ReadsFn } from "./backend.js";
import type { Deadlines } from "./deadlines.js";
import type { EarlyGrant } from "./early.js";
import type { Handle } from "./handle.js";
import type { ReadsFailure } from "./reads.js";
import { Gate, sleep, type Waiter } from "./waiters.js";

/** Attempts in flight on a resource while nobody of ours queues for it (no allocation), or its Gate. */
export type GateSlot = number | Gate;

/** What the acquire loop needs from the Locks it runs in. */
export interface LoopHost {
  readonly backend: LockBackend;
  readonly cfg: Config;
  readonly closed: boolean;
  readonly gates: Map<string, GateSlot>;
  /** One timer for the deadlines of every attempt in flight. */
  readonly deadlines: Deadlines;
  /** Subscribes the gate's resource; wakes the head to try again once messages flow. */
  subscribe(g: Gate, resource: string): void;
  dropIfIdle(g: Gate, resource: string): void;
  acquired(q: Request, reply: Granted, waited: Waited): Handle;
  /**
   * A grant nobody will use (the caller gave up, or close() ran): release it at once, or, when it was granted
   * early, once the release that grants it is answered.
   */
  releaseOrphan(q: Request, reply: Granted, early?: EarlyGrant): void;
  /** The attempt's call failed: if it may have run in Redis unanswered, a grant may be held by nobody. */
  attemptUnanswered(q: Request, err: unknown): void;
  /** A queued waiter gave up: leaves the store's queue, naming the gate's next waiter in its place. */
  leaveQueue(q: Request): void;
  /** A waiter gave up after a refusal: takes back what its refusals left to keep others out (a writer's mark). */
  withdraw(q: Request): void;
}

export type Granted = Extract<AcquireReply, [1, ...unknown[]]>;

export interface Lease {
  leaseMs: number;
  watchdog: boolean;
}
export interface Waited {
  sentAt: number;
  start: number;
  attempts: number;
  /** Granted early by a release of ours not yet answered (early.ts). */
  early?: EarlyGrant;
  /** Held from another process's handoff message: the store's claim lasts until then (by-message.ts). */
  claimedUntil?: number;
}

export interface Request extends Lease {
  resource: string;
  key: string;
  owner: string;
  waitMs: number;
  signal: AbortSignal | undefined;
  reads: ReadsFn | undefined;
  /** Try Redis first even when local waiters queue: a re-entry must not wait behind its own holder. */
  bypass: boolean;
  /** tryAcquire: one attempt, null instead of LockTimeoutError. */
  once: boolean;
  /** Set when the guarded `reads` failed before sending (see reads.ts). */
  readsFailure: ReadsFailure | undefined;
}

/** Resolves with a handle, or null for a tryAcquire that found the lock held. */
export async function acquireLoop(host: LoopHost, q: Request): Promise<Handle | null> {
  const start = host.cfg.clock.now();
  // tryAcquire waits for its one answer (bounded by the client's own timeouts); acquire for at most waitMs.
  const deadline = q.once || q.waitMs === 0 ? Number.POSITIVE_INFINITY : start + q.waitMs;
  const cur = host.gates.get(q.resource);
  if (cur !== undefined && !q.bypass && !q.once && q.waitMs > 0) {
    const w = newWaiter(q);
    const g = toGate(host, q.resource, cur);
    g.queue.push(w);
    host.cfg.emit?.({ type: "contended", resource: q.resource, pttlMs: -1 });
    return waitInQueue(host, q, {
      g,
      w,
      start,
      deadline,
      attempts: 0,
      pttl: Number.POSITIVE_INFINITY,
      pttlAt: start,
      epoch: -1,
    });
  }

  // Fast path: nobody of ours waits on this resource (or this call must not queue).
  const epoch = enterFast(host, q.resource);
  const sentAt = host.cfg.clock.now();
  // One entry per process and lock in the store's queue: the first attempt in flight's, then the local head's.
  const join = cur === undefined && mayJoin(host, q);
  let a: Attempt;
  try {
    a = await attemptWithin(host, q, deadline, false, join);
  } catch (err) {
    leaveFast(host, q.resource, { failed: "error" });
    // Redis may have run it and queued this owner before the reply was lost: the leave, sent after it, undoes that.
    if (join && mayHaveRun(host, err)) host.leaveQueue(q);
    if (mayHaveRun(host, err)) host.withdraw(q);
    throw err;
  }
  if (a.outcome === "granted") {
    leaveFast(host, q.resource, { failed: "no" });
    return handOver(host, q, a.reply, { sentAt, start, attempts: 1 });
  }
  if (a.outcome === "gave-up") {
    leaveFast(host, q.resource, { failed: "error" });
    host.withdraw(q);
    return gaveUp(host, q, start, 1, a.reason);
  }
  host.cfg.emit?.({ type: "contended", resource: q.resource, pttlMs: a.pttl });
  const refused = { failed: "held", epoch, pttl: a.pttl } as const;
  if (host.closed) {
    leaveFast(host, q.resource, refused);
    host.withdraw(q);
    throw new LocksClosedError();
  }
  if (q.once || q.waitMs === 0) {
    leaveFast(host, q.resource, refused);
    host.withdraw(q);
    return timedOut(host, q, start, 1, a.refusal);
  }
  const w = newWaiter(q);
  if (join && a.refusal === undefined) w.standing = "joined";
  if (a.fence !== undefined) w.probe = { sentAt, fence: a.fence };
  const g = leaveFast(host, q.resource, {
    ...refused,
    queue: w,
    first: cur === undefined || typeof cur === "number",
  })!;
  return waitInQueue(host, q, {
    g,
    w,
    start,
    deadline,
    attempts: 1,
    pttl: a.pttl,
    pttlAt: host.cfg.clock.now(),
    epoch,
    failedJustNow: true,
    refusal: a.refusal,
  });
}

interface WaitState {
  g: Gate;
  w: Waiter;
  start: number;
  deadline: number;
  attempts: number;
  /** The PTTL our last refusal answered, and when that answer came: the lock's end is counted from then. */
  pttl: number;
  pttlAt: number;
  /** The gate's release epoch when our last attempt was sent (-1: none). */
  epoch: number;
  failedJustNow?: boolean;
  /** The store's error when it refused our last attempt without running it: a timeout names it. */
  refusal?: unknown;
}

async function waitInQueue(host: LoopHost, q: Request, s: WaitState): Promise<Handle | null> {
  const { g, w } = s;
  const { clock } = host.cfg;
  let granted = false;
  try {
    for (;;) {
      if (w.handed) {
        granted = true;
        return takeHanded(host, q, s);
      }
      if (host.closed) throw new LocksClosedError();
      if (s.failedJustNow && g.queue[0] === w) {
        // Not awaited: a hung subscribe must not outlast waitMs. When it is ready it wakes the head,
        // which looks again (a release published before the subscription took effect was missed).
        if (g.subscription === "none") host.subscribe(g, q.resource);
        else if (g.epoch !== s.epoch) w.attemptNow = true;
      }
      if (s.failedJustNow && g.handedEarly === q.owner) {
        // The lock was handed to us while our attempt was still on its way back: adopt it now.
        g.handedEarly = undefined;
        w.attemptNow = true;
      }
      s.failedJustNow = false;
      const remaining = s.deadline - clock.now();
      if (remaining <= 0) return timedOut(host, q, s.start, s.attempts, s.refusal);
      // A waiter named in a release in flight must not attempt: that release may grant it the lock.
      const mayAttempt = w.standing !== "named" && (g.queue[0] === w || w.standing === "joined");
      if (w.attemptNow && mayAttempt) {
        w.attemptNow = false;
        s.epoch = g.epoch;
        const more = g.queue.length > 1;
        const sentAt = clock.now();
        const join = mayJoin(host, q);
        w.attempting = true;
        let a: Attempt;
        try {
          a = await attemptWithin(host, q, s.deadline, more, join);
        } catch (err) {
          // As for a gave-up attempt: it may have queued this owner unheard; the finally's leave undoes that.
          if (join && mayHaveRun(host, err)) w.standing = "joined";
          throw err;
        } finally {
          w.attempting = false;
        }
        s.attempts++;
        if (a.outcome === "gave-up") return gaveUp(host, q, s.start, s.attempts, a.reason, s.refusal);
        if (a.outcome === "granted") {
          granted = true;
          w.done = true;
          w.standing = "none";
          g.leaseEndsBy = clock.now() + q.leaseMs;
          // Without the waiters mark the holder's release would not publish, so the next head must knock;
          // on a shared lock (a semaphore) there may be room for it right now.
          g.leave(w, more && !host.backend.shared ? "wait" : "attempt");
          host.dropIfIdle(g, q.resource);
          return handOver(host, q, a.reply, { sentAt, start: s.start, attempts: s.attempts });
        }
        if (join && a.refusal === undefined) w.standing = "joined";
        if (a.fence !== undefined) w.probe = { sentAt, fence: a.fence };
        s.refusal = a.refusal;
        s.pttl = a.pttl;
        s.pttlAt = clock.now();
        s.failedJustNow = true;
        continue;
      }
      // The head, and a waiter in the store's queue, look again on a bounded timer: a lease that expires
      // announces nothing, a handoff message may be lost, and the look keeps the queue entry alive.
      const bounded = g.queue[0] === w || w.standing !== "none";
      // A head that never tried knows no PTTL: the last local grant's lease bounds how long the lock stays held
      // without a renewal (an expiry publishes nothing).
      // A refusal's PTTL counts from its answer: a wake that was no look (a message for another waiter, a
      // bound from another call's refusal) must not start it again, or such wakes put the look off for good.
      const pttl =
        s.pttl === Number.POSITIVE_INFINITY
          ? Math.max(0, g.leaseEndsBy - clock.now())
          : s.pttl < 0
            ? s.pttl
            : Math.max(0, s.pttlAt + s.pttl - clock.now());
      let nap = remaining;
      if (bounded) nap = Math.min(nap, fallbackMs(host.cfg, pttl));
      // Its look keeps its place in the store's queue (and adopts a lock handed to it, the message lost).
      if (w.standing !== "none") nap = Math.min(nap, host.cfg.queueLeaseMs / 3);
      const cause = await sleep(clock, w, nap, q.signal);
      if (cause === "timer" && (g.queue[0] === w || w.standing === "joined")) w.attemptNow = true;
    }
  } finally {
    if (!granted) {
      w.done = true;
      // A grant that reached it as it gave up goes on at once.
      if (w.handed) host.releaseOrphan(q, [1, 1, w.handed.token, w.handed.reads], w.handed.early);
      const inQueue = w.standing === "joined";
      g.leave(w, "attempt");
      if (inQueue) host.leaveQueue(q);
      host.withdraw(q);
      host.dropIfIdle(g, q.resource);
    }
  }
}

/** A release or leave of ours granted this waiter the lock (see LocksCore.settleNamed). */
function takeHanded(host: LoopHost, q: Request, s: WaitState): Handle | Promise<never> {
  const { g, w } = s;
  const grant = w.handed!;
  w.handed = undefined;
  w.done = true;
  w.standing = "none";
  g.leaseEndsBy = Math.min(grant.sentAt + q.leaseMs, grant.claimedUntil ?? Number.POSITIVE_INFINITY);
  // The releasing holder names our successor in its own release; on a semaphore with permits still free it
  // may get one right now.
  g.leave(w, grant.roomLeft ? "attempt" : "wait");
  host.dropIfIdle(g, q.resource);
  const reply: Granted = [1, 1, grant.token, grant.reads];
  const error = q.readsFailure?.error;
  if (error !== undefined) {
    host.releaseOrphan(q, reply, grant.early);
    return Promise.reject(error);
  }
  return handOver(host, q, reply, {
    sentAt: grant.sentAt,
    start: s.start,
    attempts: s.attempts,
    early: grant.early,
    claimedUntil: grant.claimedUntil,
  });
}

function newWaiter(q: Request): Waiter {
  return {
    wake: null,
    attemptNow: false,
    req: q,
    standing: "none",
    handed: undefined,
    done: false,
    attempting: false,
    probe: undefined,
  };
}

/** Only a waiting acquire under its own owner name queues in the store (and adopts what it is handed). */
function mayJoin(host: LoopHost, q: Request): boolean {
  const { handsOver, queues } = host.backend;
  return (handsOver === true || queues === true) && !q.bypass && !q.once && q.waitMs > 0;
}

function toGate(host: LoopHost, resource: string, cur: GateSlot): Gate {
  if (typeof cur !== "number") return cur;
  const g = new Gate(cur, host.cfg.clock);
  host.gates.set(resource, g);
  return g;
}

/** Counts a fast-path attempt in flight; returns the gate's epoch (-1 without a gate). */
function enterFast(host: LoopHost, resource: string): number {
  const cur = host.gates.get(resource);
  if (cur === undefined) host.gates.set(resource, 1);
  else if (typeof cur === "number") host.gates.set(resource, cur + 1);
  else {
    cur.inflight++;
    return cur.epoch;
  }
  return -1;
}

interface FastEnd {
  /** no: granted (no waiter mark was set); held: refused, so the lock is marked as waited for; error: no answer. */
  failed: "no" | "held" | "error";
  /** A refusal's: the gate's release epoch when the attempt was sent (-1: no gate then), and the PTTL it saw. */
  epoch?: number;
  pttl?: number;
  /** Queue this waiter; `first` puts it at the head (it came before the queue). */
  queue?: Waiter;
  first?: boolean;
}

/** Ends a fast-path attempt; returns the gate when it queues a waiter. */
function leaveFast(host: LoopHost, resource: string, end: FastEnd): Gate | undefined {
  const cur = host.gates.get(resource);
  if (cur === undefined || typeof cur === "number") {
    const n = (cur ?? 1) - 1;
    if (end.queue) {
      const g = new Gate(n, host.cfg.clock);
      g.queue.push(end.queue);
      host.gates.set(resource, g);
      return g;
    }
    if (n <= 0) host.gates.delete(resource);
    else host.gates.set(resource, n);
    return undefined;
  }
  cur.inflight--;
  if (end.queue) {
    if (end.first) cur.queue.unshift(end.queue);
    else cur.queue.push(end.queue);
    return cur;
  }
  if (end.failed === "held") headAfterRefusal(host, cur, end);
  // A grant carried no waiter mark, and an error left none: the queue's head must knock itself.
  else if (cur.inflight === 0) cur.wakeHead(true);
  host.dropIfIdle(cur, resource);
  return undefined;
}

/**
 * A refusal marked the lock as waited for, so a head queued behind this attempt may keep waiting for the
 * release message, unless it cannot hear it (it never tried, so it has not subscribed) or it came already: a
 * release heard while the refusal was on its way (the epoch moved since it was sent; a gate made since then
 * counts every message it heard) makes the refusal stale, and that message woke nobody. Neither does a lease
 * that runs out: a head that never tried knows no PTTL, so the refusal's bounds its sleep.
 */
function headAfterRefusal(host: LoopHost, g: Gate, end: FastEnd): void {
  const sentEpoch = end.epoch ?? -1;
  const heard = sentEpoch === -1 ? g.epoch > 0 : g.epoch !== sentEpoch;
  if (heard || (g.inflight === 0 && g.subscription === "none")) {
    g.wakeHead(true);
    return;
  }
  const pttl = end.pttl ?? -1;
  const endsBy = host.cfg.clock.now() + pttl;
  if (pttl >= 0 && endsBy < g.leaseEndsBy) {
    g.leaseEndsBy = endsBy;
    g.wakeHead(false); // sleeps again, now bounded by it
  }
}

/** The caller may have given up, or close() run, while the winning attempt was in flight. */
function handOver(host: LoopHost, q: Request, r: Granted, waited: Waited): Handle | Promise<never> {
  if (host.closed) {
    host.releaseOrphan(q, r, waited.early);
    return Promise.reject(new LocksClosedError());
  }
  if (q.signal?.aborted) {
    host.releaseOrphan(q, r, waited.early);
    return Promise.reject(q.signal.reason);
  }
  const h = host.acquired(q, r, waited);
  // Answered after the lease it started could have ended (the process paused past it): the lock may be
  // another's by now, so it is not handed out. Its release, owner-checked, frees it if it is still ours.
  if (!h.isHeld()) {
    h.release().catch(() => {});
    return Promise.reject(h.lostError);
  }
  return h;
}

function gaveUp(
  host: LoopHost,
  q: Request,
  start: number,
  attempts: number,
  reason: GaveUpReason,
  refusal?: unknown,
): null {
  if (reason === "aborted") throw q.signal!.reason;
  if (reason === "closed") throw new LocksClosedError();
  return timedOut(host, q, start, attempts, refusal);
}

function fallbackMs(cfg: Config, pttl: number): number {
  const base = pttl < 0 ? cfg.retryMaxMs : Math.min(Math.max(pttl, cfg.retryMinMs), cfg.retryMaxMs);
  return base + cfg.random() * cfg.jitterMs;
}

function timedOut(host: LoopHost, q: Request, start: number, attempts: number, refusal?: unknown): null {
  // close() ran while this call waited: that, not the wait running out, is why it ends.
  if (host.closed) throw new LocksClosedError();
  const waitedMs = host.cfg.clock.now() - start;
  if (q.once) return null;
  host.cfg.emit?.({ type: "timeout", resource: q.resource, waitedMs, attempts });
  throw new LockTimeoutError(q.resource, waitedMs, attempts, refusal);
}
