import type { AsyncLocalStorage } from "node:async_hooks";
import type { LockEvent } from "../events.js";
import type { AcquireCall } from "./acquire-call.js";
import type { Holds } from "./holds.js";

/**
 * The onEvent of an instrumented Locks. The core emits a call's contended, acquired and timeout events in that
 * call's async context, where `calls` holds its AcquireCall; the others go to the hold they name.
 */
export function telemetryListener(calls: AsyncLocalStorage<AcquireCall>, holds: Holds) {
  return (e: LockEvent): void => {
    const store = calls.getStore();
    // Inside a withLock callback the store is the outer, finished call; it must not take a nested call's events.
    const call =
      store && !store.done && store.resource === e.resource && store.kind === (e.kind ?? "mutex")
        ? store
        : undefined;
    switch (e.type) {
      case "contended":
        call?.contended(e.pttlMs);
        break;
      case "acquired": {
        const hold = holds.granted(e);
        call?.granted(e, hold);
        break;
      }
      case "timeout":
        call?.finish("timeout", e.waitedMs, e.attempts);
        break;
      case "renewed":
        holds.renewed(e);
        break;
      case "released":
        holds.released(e);
        break;
      case "lost":
        holds.lost(e);
        break;
    }
  };
}
