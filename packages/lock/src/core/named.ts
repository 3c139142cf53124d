import type { NextWaiter } from "./backend.js";
import type { Gate, QueueStanding, Waiter } from "./waiters.js";

/** A waiter named `next` in a release (or `successor` in a leave) in flight, and what it was before. */
export interface Named {
  g: Gate;
  w: Waiter;
  before: QueueStanding;
  /** Named although other processes' waiters may queue: the gate's local streak is below its bound. */
  keep: boolean;
  /** When the naming call was sent: a lease it grants is counted from there. */
  sentAt: number;
}

/** What the store needs to know of a named waiter. */
export function nextWaiterOf(named: Named): NextWaiter {
  const { req } = named.w;
  return { owner: req.owner, leaseMs: req.leaseMs, reads: req.reads, keep: named.keep };
}
