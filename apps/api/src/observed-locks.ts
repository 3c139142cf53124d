import type { LockEvent, Locks } from "@lockyard/lock";
import { instrumentLocks } from "@lockyard/lock/otel";
import type { Env } from "./env.js";
import { type LockBackendLabel, resourceKind } from "./metrics.js";
import type { Telemetry } from "./telemetry.js";

/** Creates one of the API's Locks from its factory and options: instrumented when telemetry runs, plain otherwise. */
export type LockFactory = <O extends { onEvent?: ((e: LockEvent) => void) | undefined }, L extends Locks>(
  create: (options: O) => L,
  options: O,
) => L;

export function lockFactory(env: Env, telemetry: Telemetry | null, backend: LockBackendLabel): LockFactory {
  if (!telemetry) return (create, options) => create(options);
  return (create, options) =>
    instrumentLocks(create, options, {
      tracer: telemetry.tracer,
      meter: telemetry.meter,
      hashResourceNames: env.LOCK_HASH_RESOURCE_NAMES,
      ...(env.LOCK_HASH_KEY ? { hashKey: env.LOCK_HASH_KEY } : {}),
      // The same bounded labels as the Prometheus metrics on /metrics.
      resourceKind,
      attributes: { "lock.backend": backend },
    });
}
