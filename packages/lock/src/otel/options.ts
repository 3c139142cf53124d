import { type Attributes, type Meter, metrics, type Tracer, trace } from "@opentelemetry/api";
import { InvalidOptionError } from "../errors.js";
import { keyedHash } from "./hash.js";
import { SCOPE } from "./names.js";

export interface LockTelemetryOptions {
  /** Default: `trace.getTracer("@lockyard/lock")` from the globally registered provider (a no-op without one). */
  tracer?: Tracer;
  /** Default: `metrics.getMeter("@lockyard/lock")` from the globally registered provider (a no-op without one). */
  meter?: Meter;
  /**
   * Put an HMAC of resource names and owner ids on spans instead of the names themselves, for names that
   * may carry personal data (`user:alice@example.com`). Metrics never carry either. Default false.
   */
  hashResourceNames?: boolean;
  /**
   * The HMAC key. Give every process the same key to see one resource under one hash across instances;
   * the default, a random key per process, makes hashes unlinkable across processes and restarts.
   */
  hashKey?: string;
  /** A bounded label for a resource (`order:42` → `order`), put on spans and metrics as `lock.resource_kind`. */
  resourceKind?: (resource: string) => string;
  /** Put on every span and metric point as they are (bounded values only: e.g. which store, which pool). */
  attributes?: Attributes;
}

export interface Telemetry {
  tracer: Tracer;
  meter: Meter;
  /** Resource names and owner ids as they go on spans: as given, or hashed. */
  name: (value: string) => string;
  hashing: boolean;
  resourceKind: ((resource: string) => string) | undefined;
  attributes: Attributes;
}

export function parseTelemetryOptions(o: LockTelemetryOptions = {}): Telemetry {
  if (typeof o !== "object" || o === null) throw new InvalidOptionError("telemetry", o, "an object");
  const hashing = o.hashResourceNames ?? false;
  if (typeof hashing !== "boolean") throw new InvalidOptionError("hashResourceNames", hashing, "a boolean");
  if (o.hashKey !== undefined && (typeof o.hashKey !== "string" || o.hashKey.length === 0)) {
    throw new InvalidOptionError("hashKey", o.hashKey, "a non-empty string");
  }
  if (o.resourceKind !== undefined && typeof o.resourceKind !== "function") {
    throw new InvalidOptionError("resourceKind", o.resourceKind, "a function");
  }
  if (o.attributes !== undefined && (typeof o.attributes !== "object" || o.attributes === null)) {
    throw new InvalidOptionError("attributes", o.attributes, "an object");
  }
  return {
    tracer: o.tracer ?? trace.getTracer(SCOPE),
    meter: o.meter ?? metrics.getMeter(SCOPE),
    name: hashing ? keyedHash(o.hashKey) : (value) => value,
    hashing,
    resourceKind: o.resourceKind,
    attributes: { ...o.attributes },
  };
}
