import type { Counter, Histogram, Meter, UpDownCounter } from "@opentelemetry/api";
import { METRIC } from "./names.js";

/** Waits and holds run from a millisecond to a lease or more; the SDK's default buckets are for ms. */
const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface Instruments {
  wait: Histogram;
  hold: Histogram;
  failures: Counter;
  renewals: Counter;
  waiters: UpDownCounter;
}

export function createInstruments(meter: Meter): Instruments {
  const advice = { explicitBucketBoundaries: SECONDS };
  return {
    wait: meter.createHistogram(METRIC.wait, {
      unit: "s",
      description: "Time an acquire, tryAcquire or withLock call took to get the lock or give up",
      advice,
    }),
    hold: meter.createHistogram(METRIC.hold, {
      unit: "s",
      description: "Time from a grant to its release or loss (re-entries included)",
      advice,
    }),
    failures: meter.createCounter(METRIC.failures, {
      unit: "{failure}",
      description: "Acquisitions that failed and holds that were lost, by reason",
    }),
    renewals: meter.createCounter(METRIC.renewals, {
      unit: "{renewal}",
      description: "Successful lease renewals",
    }),
    waiters: meter.createUpDownCounter(METRIC.waiters, {
      unit: "{waiter}",
      description: "Calls waiting for a lock someone else holds",
    }),
  };
}
