/** Instrumentation scope of every tracer and meter this library asks for. */
export const SCOPE = "@lockyard/lock";

export const SPAN = {
  acquire: "lock.acquire",
  hold: "lock.hold",
} as const;

/** Span event names: on the acquire span (contended) and on the hold span (the rest). */
export const EVENT = {
  contended: "contended",
  reentered: "reentered",
  renewed: "renewed",
  released: "released",
  lost: "lost",
  closed: "closed",
} as const;

/** Attribute keys. Stable: dashboards and alerts are built on them. */
export const ATTR = {
  /** The resource name, or its HMAC when `hashResourceNames` is set. Spans only, never metrics. */
  resource: "lock.resource",
  /** The owner id, or its HMAC when `hashResourceNames` is set. Spans only. */
  owner: "lock.owner",
  /** What `resourceKind` returned: a bounded label, on spans and metrics. */
  resourceKind: "lock.resource_kind",
  /** Which lock: "mutex", "semaphore", or a read-write lock's "read" or "write" side. Spans and metrics. */
  lockKind: "lock.kind",
  operation: "lock.operation",
  outcome: "lock.outcome",
  waitMs: "lock.wait_ms",
  attempts: "lock.attempts",
  token: "lock.fencing_token",
  count: "lock.count",
  pttlMs: "lock.pttl_ms",
  leaseMs: "lock.lease_ms",
  heldMs: "lock.held_ms",
  releaseResult: "lock.release_result",
  releaseLate: "lock.release_late",
  lostReason: "lock.lost_reason",
  failureReason: "lock.failure_reason",
} as const;

export const METRIC = {
  /** Histogram, s: from the call to its end, by `lock.outcome`. */
  wait: "lock.wait.duration",
  /** Histogram, s: from the grant to the release or loss, by `lock.outcome` (released | lost). */
  hold: "lock.hold.duration",
  /** Counter: acquisitions that failed and holds that were lost, by `lock.failure_reason`. */
  failures: "lock.failures",
  /** Counter: successful renewals (watchdog or `renew()`). */
  renewals: "lock.renewals",
  /** UpDownCounter: callers waiting for a lock held by someone else right now. */
  waiters: "lock.waiters",
} as const;

/** How an acquire, tryAcquire or withLock call ended its wait. */
export type AcquireOutcome = "acquired" | "refused" | "timeout" | "aborted" | "closed" | "error";
