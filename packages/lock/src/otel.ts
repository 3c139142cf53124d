// "@lockyard/lock/otel": spans and metrics through @opentelemetry/api (an optional peer; no SDK here).
export { instrumentLocks } from "./otel/instrument.js";
export { type AcquireOutcome, ATTR, EVENT, METRIC, SCOPE, SPAN } from "./otel/names.js";
export type { LockTelemetryOptions } from "./otel/options.js";
