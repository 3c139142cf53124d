import type { AcquireReply, LockBackend, ReadsFn } from "../backend.js";
import type { Config } from "../config.js";
import { LocksClosedError, LockTimeoutError } from "../errors.js";
import type { Handle } from "./handle.js";
import { Gate, sleep, type Waiter } from "./waiters.js";

/** What the acquire loop needs from the Locks it runs in. */
export interface LoopHost {
  readonly backend: LockBackend;
  readonly cfg: Config;
  readonly closed: boolean;
  /** Per resource: a count of attempts in flight while nobody queues (no allocation), or a Gate. */
  readonly gates: Map<string, number | Gate>;
  /** Subscribes the gate's resource; wakes the head to try again once messages flow. */
  subscribe(g: Gate, resource: string): void;
  dropIfIdle(g: Gate, resource: string): void;
  acquired(
    resource: string,
    key: string,
    owner: string,
    r: AcquireReply,
    lease: Lease,
    waited: Waited,
  ): Handle;
}

export interface Lease {
  leaseMs: number;
  watchdog: boolean;
}
export interface Waited {
  sentAt: number;
  start: number;
  attempts: number;
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
}

/** Resolves with a handle, or null when the wait ran out and `throwOnTimeout` is false. */
export async function acquireLoop(
  host: LoopHost,
  q: Request,
  throwOnTimeout: boolean,
): Promise<Handle | null> {
  const start = performance.now();
  const { gates, backend } = host;
  const cur = gates.get(q.resource);
  let attempts = 0;
  let pttl = Number.POSITIVE_INFINITY;
  let epoch = -1;
  let g: Gate;
  let failedJustNow = false;
  // Made only once this call has to wait: the uncontended path allocates no waiter.
  let w: Waiter;

  if (cur === undefined || q.bypass || q.waitMs === 0) {
    // Fast path: nobody of ours waits on this resource.
    if (cur === undefined) gates.set(q.resource, 1);
    else if (typeof cur === "number") gates.set(q.resource, cur + 1);
    else {
      cur.inflight++;
      epoch = cur.epoch;
    }
    const sentAt = performance.now();
    let r: AcquireReply;
    try {
      r = await backend.acquire(q.resource, q.key, q.owner, q.leaseMs, false, q.reads);
    } catch (err) {
      endFast(host, q.resource, undefined, false);
      throw err;
    }
    attempts = 1;
    if (r[0] === 1) {
      endFast(host, q.resource, undefined, false);
      return handOver(host, q, r, { sentAt, start, attempts });
    }
    pttl = r[1];
    host.cfg.emit?.({ type: "contended", resource: q.resource, pttlMs: pttl });
    if (q.waitMs === 0 || host.closed) {
      endFast(host, q.resource, undefined, true);
      return timedOut(host, q, start, attempts, throwOnTimeout);
    }
    w = { wake: null, attemptNow: false };
    g = endFast(host, q.resource, w, cur === undefined || typeof cur === "number")!;
    failedJustNow = true;
  } else {
    w = { wake: null, attemptNow: false };
    if (typeof cur === "number") {
      g = new Gate(cur);
      gates.set(q.resource, g);
    } else g = cur;
    g.queue.push(w);
    host.cfg.emit?.({ type: "contended", resource: q.resource, pttlMs: -1 });
  }

  const deadline = start + q.waitMs;
  let done = false;
  try {
    for (;;) {
      if (failedJustNow && g.queue[0] === w) {
        // Not awaited: a hung subscribe must not outlast waitMs. When it is ready it wakes the head,
        // which looks again (a release published before the subscription took effect was missed).
        if (g.sub === 0) host.subscribe(g, q.resource);
        else if (g.epoch !== epoch) w.attemptNow = true;
      }
      failedJustNow = false;
      if (host.closed) throw new LocksClosedError();
      const remaining = deadline - performance.now();
      if (remaining <= 0) return timedOut(host, q, start, attempts, throwOnTimeout);
      if (w.attemptNow && g.queue[0] === w) {
        w.attemptNow = false;
        epoch = g.epoch;
        const more = g.queue.length > 1;
        const sentAt = performance.now();
        const r = await backend.acquire(q.resource, q.key, q.owner, q.leaseMs, more, q.reads);
        attempts++;
        if (r[0] === 1) {
          done = true;
          // Without the `more` mark the holder's release would not publish, so the next head must knock.
          g.leave(w, !more);
          host.dropIfIdle(g, q.resource);
          return handOver(host, q, r, { sentAt, start, attempts });
        }
        pttl = r[1];
        failedJustNow = true;
        continue;
      }
      const head = g.queue[0] === w;
      const byTimer = await sleep(
        w,
        head ? Math.min(remaining, fallbackMs(host.cfg, pttl)) : remaining,
        q.signal,
      );
      if (byTimer && g.queue[0] === w) w.attemptNow = true;
    }
  } finally {
    if (!done) {
      g.leave(w, false);
      host.dropIfIdle(g, q.resource);
    }
  }
}

/**
 * Ends a fast-path attempt. With a waiter, queues it (at the head when `flag`: it came before the queue)
 * and returns the gate. Without one, `flag` says the attempt failed and so marked the lock as waited for.
 */
function endFast(host: LoopHost, resource: string, w: Waiter | undefined, flag: boolean): Gate | undefined {
  const cur = host.gates.get(resource);
  if (cur === undefined || typeof cur === "number") {
    const n = (cur ?? 1) - 1;
    if (w) {
      const g = new Gate(n);
      g.queue.push(w);
      host.gates.set(resource, g);
      return g;
    }
    if (n <= 0) host.gates.delete(resource);
    else host.gates.set(resource, n);
    return undefined;
  }
  cur.inflight--;
  if (w) {
    if (flag) cur.queue.unshift(w);
    else cur.queue.push(w);
    return cur;
  }
  // A success here carried no waiter mark, and an error left none: the queue's head must knock itself.
  // (A plain failure did mark waiters, so the head may keep waiting for the release message.)
  if (cur.inflight === 0 && !flag) cur.wakeHead(true);
  host.dropIfIdle(cur, resource);
  return undefined;
}

/** The caller may have given up while the winning attempt was in flight: then nobody would release it. */
function handOver(host: LoopHost, q: Request, r: AcquireReply, waited: Waited): Handle | Promise<Handle> {
  const h = host.acquired(q.resource, q.key, q.owner, r, q, waited);
  if (!q.signal?.aborted) return h;
  const reason: unknown = q.signal.reason;
  return h.release().then(
    () => Promise.reject(reason),
    () => Promise.reject(reason),
  );
}

function fallbackMs(cfg: Config, pttl: number): number {
  const base = pttl < 0 ? cfg.retryMaxMs : Math.min(Math.max(pttl, cfg.retryMinMs), cfg.retryMaxMs);
  return base + Math.random() * cfg.jitterMs;
}

function timedOut(host: LoopHost, q: Request, start: number, attempts: number, throwIt: boolean): null {
  const waitedMs = performance.now() - start;
  if (!throwIt) return null;
  host.cfg.emit?.({ type: "timeout", resource: q.resource, waitedMs, attempts });
  throw new LockTimeoutError(q.resource, waitedMs, attempts);
}
