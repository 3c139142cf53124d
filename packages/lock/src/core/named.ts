import type { NextWaiter } from "./backend.js";
import type { EarlyGrant } from "./early.js";
import type { Gate, QueueStanding, Waiter } from "./waiters.js";

/** A waiter named `next` in a release (or `successor` in a leave) in flight, and what it was before. */
export interface Named {
  g: Gate;
  w: Waiter;
  before: QueueStanding;
  /**
   * Granted it although other processes' waiters queue, while the first of them has queued for less than this:
   * unbounded for the gate's first `localStreak` local grants in a row, then `localStreakMs`.
   */
  keepMs: number;
  /** keepMs is unbounded: the call grants it the lock whatever other processes queue, if it frees the lock. */
  certain: boolean;
  /** When the naming call was sent: a lease it grants is counted from there. */
  sentAt: number;
  /** It was granted the lock as the call was sent, before the answer (early.ts). */
  early?: EarlyGrant;
}

/** What the store needs to know of a named waiter. */
export function nextWaiterOf(named: Named): NextWaiter {
  const { req } = named.w;
  return { owner: req.owner, leaseMs: req.leaseMs, reads: req.reads, keepMs: named.keepMs };
}
