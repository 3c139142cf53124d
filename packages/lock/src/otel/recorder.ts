import type { Attributes, Exception, Span, Tracer } from "@opentelemetry/api";
import type { LockKind } from "../events.js";
import { createInstruments, type Instruments } from "./instruments.js";
import { ATTR } from "./names.js";
import type { Telemetry } from "./options.js";

/** `lock.kind`: an event's kind, "mutex" for the mutex (whose events carry none). */
export type LockKindLabel = LockKind | "mutex";

/** What the acquire calls and the holds of one instrumented Locks record into. */
export interface Recorder {
  tracer: Tracer;
  instruments: Instruments;
  /** Resource names and owner ids as they go on spans. */
  name: (value: string) => string;
  /**
   * The metric attributes of a lock: the fixed `attributes`, the lock's kind (`lock.kind`), and the resource's
   * kind when `resourceKind` is set.
   */
  labels: (resource: string, kind: LockKindLabel) => Attributes;
  /** Puts an error on a span, without its message when names are hashed (messages quote resource names). */
  recordError: (span: Span, err: unknown) => void;
}

export function createRecorder(t: Telemetry): Recorder {
  const kindOf = t.resourceKind;
  const fixed = t.attributes;
  return {
    tracer: t.tracer,
    instruments: createInstruments(t.meter),
    name: t.name,
    labels: kindOf
      ? (resource, kind) => ({
          ...fixed,
          [ATTR.lockKind]: kind,
          [ATTR.resourceKind]: safeKind(kindOf, resource),
        })
      : (_resource, kind) => ({ ...fixed, [ATTR.lockKind]: kind }),
    recordError(span, err) {
      const e = err instanceof Error ? err : new Error(String(err));
      const exception: Exception = t.hashing ? { name: e.name } : e;
      span.recordException(exception);
    },
  };
}

/** A throwing `resourceKind` must not break locking. */
function safeKind(kindOf: (resource: string) => string, resource: string): string {
  try {
    return String(kindOf(resource));
  } catch {
    return "other";
  }
}
