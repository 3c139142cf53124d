import type { Locks } from "@lockyard/lock";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Metrics } from "../metrics.js";
import { expireOrders } from "../orders/store.js";
import { outageLog } from "./outage.js";
import { recordRun } from "./runs.js";

export const JOB_RESOURCE = "job:cleanup";

export interface JobDeps {
  redis: Redis;
  locks: Locks;
  logger: Logger;
  metrics: Metrics;
  instanceId: string;
  intervalMs: number;
  /** Orders (idempotency records) younger than this are never touched. */
  orderRetentionMs: number;
}

/** The job's work: forget orders that left their retention window. */
export function cleanup(deps: Pick<JobDeps, "redis" | "orderRetentionMs">): Promise<number> {
  return expireOrders(deps.redis, deps.orderRetentionMs);
}

/**
 * Runs the cleanup once per tick across all instances. Ticks are aligned to wall-clock multiples of
 * the interval so every instance competes for the same tick at the same moment; the winner keeps
 * the lock (explicit lease, no release) for most of the tick, so an instance whose timer fires a
 * little late still finds it taken. A timer firing very late skips its tick rather than run twice.
 */
export function startJobs(deps: JobDeps): { stop(): void } {
  const { intervalMs } = deps;
  const leaseMs = Math.max(50, Math.floor(intervalMs * 0.8));
  const maxLateMs = Math.floor(intervalMs * 0.4);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const outage = outageLog(deps.logger, "cleanup job");

  const schedule = () => {
    if (stopped) return;
    // Wall-clock on purpose: separate processes only share the wall clock.
    const now = Date.now();
    const next = (Math.floor(now / intervalMs) + 1) * intervalMs;
    timer = setTimeout(() => void tick(next), next - now);
    timer.unref();
  };

  const tick = async (scheduledAt: number) => {
    schedule();
    const startedAt = Date.now();
    if (startedAt - scheduledAt > maxLateMs) {
      deps.logger.warn({ lateMs: startedAt - scheduledAt }, "job tick fired too late; skipped");
      return;
    }
    try {
      const lock = await deps.locks.tryAcquire(JOB_RESOURCE, { leaseMs });
      outage.ok();
      if (!lock) return;
      const t0 = performance.now();
      const removed = await cleanup(deps);
      await recordRun(deps.redis, {
        tick: Math.round(scheduledAt / intervalMs),
        scheduledAt,
        startedAt,
        instanceId: deps.instanceId,
        durationMs: performance.now() - t0,
        token: lock.token,
        removed,
      });
      deps.metrics.jobRuns.inc();
    } catch (err) {
      outage.failed(err, deps.redis.status === "ready");
    }
  };

  schedule();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
