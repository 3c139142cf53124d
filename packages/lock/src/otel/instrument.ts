import { AsyncLocalStorage } from "node:async_hooks";
import { InvalidOptionError } from "../errors.js";
import type { LockEvent } from "../events.js";
import type { Locks } from "../types.js";
import type { AcquireCall } from "./acquire-call.js";
import { Holds } from "./holds.js";
import { telemetryListener } from "./listener.js";
import { type LockTelemetryOptions, parseTelemetryOptions } from "./options.js";
import { createRecorder } from "./recorder.js";
import { tracedLocks } from "./traced-locks.js";

type Listener = (event: LockEvent) => void;

/**
 * Creates a Locks with `create(options)` and records its spans and metrics with OpenTelemetry.
 *
 * The events alone cannot tell when a tryAcquire, an aborted call or a failed one stops waiting (no event
 * says so), so the instance is wrapped as well as listened to: acquire, tryAcquire and withLock each get an
 * acquire span from call to outcome. `options.onEvent`, if any, still gets every event, first.
 */
export function instrumentLocks<O extends { onEvent?: Listener | undefined }, L extends Locks>(
  create: (options: O) => L,
  options: O,
  telemetry?: LockTelemetryOptions,
): L {
  const r = createRecorder(parseTelemetryOptions(telemetry));
  const calls = new AsyncLocalStorage<AcquireCall>();
  const holds = new Holds(r);
  const record = telemetryListener(calls, holds);
  const theirs = options.onEvent;
  if (theirs !== undefined && typeof theirs !== "function") {
    throw new InvalidOptionError("onEvent", theirs, "a function");
  }
  const onEvent: Listener = theirs ? both(theirs, record) : record;
  return tracedLocks(create({ ...options, onEvent }), { r, calls, holds });
}

function both(first: Listener, second: Listener): Listener {
  return (e) => {
    try {
      first(e);
    } finally {
      second(e);
    }
  };
}
