import { LocksClosedError, LockTimeoutError } from "../errors.js";
import type { AcquireOutcome } from "./names.js";

/** Outcomes that count as failures (`lock.failures`) and mark the acquire span as an error. */
export const FAILED: ReadonlySet<AcquireOutcome> = new Set(["timeout", "aborted", "closed", "error"]);

/** Why a call rejected before it got the lock. */
export function failureOutcome(err: unknown, signal: AbortSignal | undefined): AcquireOutcome {
  if (signal?.aborted && err === signal.reason) return "aborted";
  if (err instanceof LocksClosedError) return "closed";
  if (err instanceof LockTimeoutError) return "timeout";
  return "error";
}
