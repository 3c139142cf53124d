import { InvalidOptionError } from "../errors.js";
import type { ReadsFn } from "./backend.js";

/** Where a guarded reads function records that it failed before sending anything. */
export interface ReadsFailure {
  error?: unknown;
}

/**
 * Wraps the caller's `reads` so it never throws into a backend: a reads function that throws, or returns no
 * promise, is a bug in the caller that must neither orphan a lock the attempt was granted nor surface as an
 * unhandled rejection. The failure is recorded; the acquire loop releases any grant and rejects with it.
 */
export function guardReads(reads: ReadsFn, failure: ReadsFailure): ReadsFn {
  return (redis, lock) => {
    let out: unknown;
    try {
      out = reads(redis, lock);
    } catch (err) {
      failure.error ??= err;
      return Promise.reject(err);
    }
    if (typeof (out as PromiseLike<unknown> | null)?.then !== "function") {
      failure.error ??= new InvalidOptionError("reads", typeof out, "a function returning a promise");
      return Promise.reject(failure.error);
    }
    return out as Promise<unknown>;
  };
}
