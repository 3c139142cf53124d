import type { Attributes, Exception, Span, Tracer } from "@opentelemetry/api";
import { createInstruments, type Instruments } from "./instruments.js";
import { ATTR } from "./names.js";
import type { Telemetry } from "./options.js";

/** What the acquire calls and the holds of one instrumented Locks record into. */
export interface Recorder {
  tracer: Tracer;
  instruments: Instruments;
  /** Resource names and owner ids as they go on spans. */
  name: (value: string) => string;
  /** The metric attributes of a resource: the fixed `attributes`, and its kind when `resourceKind` is set. */
  labels: (resource: string) => Attributes;
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
      ? (resource) => ({ ...fixed, [ATTR.resourceKind]: safeKind(kindOf, resource) })
      : () => fixed,
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
