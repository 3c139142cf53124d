import type { LostReason } from "./errors.js";
import type { ReleaseResult } from "./types.js";

/** Which kind of lock an event is about: absent for the mutex (and every lock of Redlock and PostgreSQL). */
export type LockKind = "semaphore" | "read" | "write";

interface Base {
  resource: string;
  /** Set on the events of semaphores ("semaphore") and of read-write locks' sides ("read", "write"). */
  kind?: LockKind;
}

export type LockEvent =
  | (Base & {
      type: "acquired";
      owner: string;
      token: number | null;
      count: number;
      waitedMs: number;
      attempts: number;
    })
  | (Base & {
      type: "released";
      owner: string;
      heldMs: number;
      result: ReleaseResult;
      /** Set when the answer came from a background retry after release() had failed to reach Redis. */
      late?: true;
    })
  | (Base & { type: "renewed"; owner: string; leaseMs: number })
  | (Base & { type: "lost"; owner: string; reason: LostReason; heldMs: number })
  | (Base & { type: "timeout"; waitedMs: number; attempts: number })
  | (Base & { type: "contended"; pttlMs: number });

export type LockEventType = LockEvent["type"];
