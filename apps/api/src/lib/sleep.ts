import { setTimeout as delay } from "node:timers/promises";

/**
 * Node's timers/promises setTimeout, unref'd, that rejects with the signal's own reason (a LockLostError
 * stays one, as the deduct's outcome needs) instead of an AbortError. Where the reason does not matter,
 * use timers/promises directly.
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  if (ms <= 0) return;
  try {
    await delay(ms, undefined, signal ? { signal, ref: false } : { ref: false });
  } catch (err) {
    throw signal?.aborted ? signal.reason : err;
  }
}
