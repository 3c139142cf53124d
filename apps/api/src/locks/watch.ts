import { sleep } from "../lib/sleep.js";
import type { LocksSnapshot } from "../types.js";
import { fingerprint, type LockSource, snapshot } from "./snapshot.js";

const HEARTBEAT_MS = 2_000;

/**
 * Snapshots of the held locks: the first at once, then one per poll whenever a lock is held or the
 * set changed (so TTL bars and renewals stay live), and a heartbeat while nothing happens.
 */
export async function* watchLocks(
  sources: () => readonly LockSource[],
  opts: { instanceId: string; prefix: string; intervalMs: number; signal: AbortSignal | undefined },
): AsyncGenerator<LocksSnapshot> {
  let last = "";
  let lastSent = 0;
  while (!opts.signal?.aborted) {
    const snap = await snapshot(sources(), opts.instanceId, opts.prefix);
    const print = fingerprint(snap.locks);
    const now = performance.now();
    if (print !== last || snap.locks.length > 0 || now - lastSent >= HEARTBEAT_MS) {
      last = print;
      lastSent = now;
      yield snap;
    }
    try {
      await sleep(opts.intervalMs, opts.signal);
    } catch {
      return;
    }
  }
}
