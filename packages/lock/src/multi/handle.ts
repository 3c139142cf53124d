import { LockReleasedError } from "../errors.js";
import type { LockHandle, MultiLockHandle, ReleaseResult } from "../types.js";

/** Several held locks as one: released together, lost when any of them is lost. */
export class MultiHandle implements MultiLockHandle {
  readonly resources: readonly string[];
  readonly tokens: readonly (number | null)[];
  readonly signal: AbortSignal;
  private releasing: Promise<ReleaseResult> | undefined;

  constructor(readonly handles: readonly LockHandle[]) {
    this.resources = handles.map((h) => h.resource);
    this.tokens = handles.map((h) => h.token);
    this.signal = AbortSignal.any(handles.map((h) => h.signal));
  }

  isHeld(): boolean {
    return this.handles.every((h) => h.isHeld());
  }

  async renew(): Promise<boolean> {
    const answers = await Promise.all(this.handles.map((h) => h.renew()));
    return answers.every(Boolean);
  }

  /**
   * Releases every lock (in reverse order of taking), even when one release fails; the first error is thrown.
   * A second release rejects with LockReleasedError, as a single handle's does.
   */
  release(): Promise<ReleaseResult> {
    if (this.releasing) return Promise.reject(new LockReleasedError(this.resources.join(", ")));
    this.releasing = releaseAll(this.handles);
    return this.releasing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.releasing) await this.release();
  }
}

/**
 * Gives back what a multi-resource acquire took, last taken first. "released" when every lock was,
 * "not-owner" when any was no longer ours (lost meanwhile), else "decremented" (some were re-entries).
 */
export async function releaseAll(handles: readonly LockHandle[]): Promise<ReleaseResult> {
  const results = await Promise.allSettled([...handles].reverse().map((h) => h.release()));
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
  const values = results.map((r) => (r as PromiseFulfilledResult<ReleaseResult>).value);
  if (values.includes("not-owner")) return "not-owner";
  return values.every((v) => v === "released") ? "released" : "decremented";
}
