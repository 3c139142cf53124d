import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";

const lockSeconds = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** One registry per process (and per test context), so nothing is registered twice. */
export function createMetrics({ defaults = false }: { defaults?: boolean } = {}) {
  const registry = new Registry();
  if (defaults) collectDefaultMetrics({ register: registry });
  // backend: redis, redlock or postgres, the lock store behind the event (the demo modes' lock backends).
  const labelNames = ["resource_kind", "backend"] as const;
  return {
    registry,
    lockWait: new Histogram({
      name: "lockyard_lock_wait_seconds",
      help: "Time from acquire() to holding the lock",
      labelNames,
      buckets: lockSeconds,
      registers: [registry],
    }),
    lockHold: new Histogram({
      name: "lockyard_lock_hold_seconds",
      help: "Time a lock was held until released",
      labelNames,
      buckets: lockSeconds,
      registers: [registry],
    }),
    acquisitions: new Counter({
      name: "lockyard_lock_acquisitions_total",
      help: "Locks acquired",
      labelNames,
      registers: [registry],
    }),
    timeouts: new Counter({
      name: "lockyard_lock_timeouts_total",
      help: "acquire() calls that gave up after waitMs",
      labelNames,
      registers: [registry],
    }),
    renewals: new Counter({
      name: "lockyard_lock_renewals_total",
      help: "Watchdog renewals",
      labelNames,
      registers: [registry],
    }),
    losses: new Counter({
      name: "lockyard_lock_losses_total",
      help: "Locks lost while held (renewal refused, key gone or renewal deadline passed)",
      labelNames,
      registers: [registry],
    }),
    contended: new Counter({
      name: "lockyard_lock_contended_total",
      help: "Acquire attempts that found the lock held by someone else",
      labelNames,
      registers: [registry],
    }),
    deducts: new Counter({
      name: "lockyard_stock_deducts_total",
      help: "stock.deduct outcomes",
      labelNames: ["mode", "outcome"] as const,
      registers: [registry],
    }),
    bursts: new Counter({
      name: "lockyard_burst_requests_total",
      help: "demo.burst results per mode",
      labelNames: ["mode", "outcome"] as const,
      registers: [registry],
    }),
    burstOversold: new Counter({
      name: "lockyard_burst_oversold_total",
      help: "Units oversold by demo.burst, per mode",
      labelNames: ["mode"] as const,
      registers: [registry],
    }),
    jobRuns: new Counter({
      name: "lockyard_job_runs_total",
      help: "Cleanup job runs won by this instance",
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

export type LockBackendLabel = "redis" | "redlock" | "postgres";

/**
 * `order:submit:7` → `order`: a bounded label, never the full resource name. A product's lock is named by its
 * bare id (stock/keys.ts), the only resource without a `:`, so it is `stock`.
 */
export function resourceKind(resource: string): string {
  return resource.includes(":") ? (resource.split(":", 1)[0] ?? "other") : "stock";
}
