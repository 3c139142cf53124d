import { createLocks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createMetrics } from "../metrics.js";
import { recentRuns } from "./runs.js";
import { startJobs } from "./scheduler.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

describe("cleanup job", () => {
  it("exactly one of several instances runs each tick", async () => {
    const intervalMs = 300;
    await redis.del("jobs:cleanup:runs");
    const instances = ["job-a", "job-b", "job-c"].map((instanceId) => {
      const locks = createLocks({ redis, instanceId });
      const jobs = startJobs({
        redis,
        locks,
        instanceId,
        intervalMs,
        orderRetentionMs: 24 * 3_600_000,
        logger: pino({ level: "silent" }),
        metrics: createMetrics(),
      });
      return { locks, jobs };
    });
    await new Promise((r) => setTimeout(r, intervalMs * 8));
    for (const i of instances) {
      i.jobs.stop();
      await i.locks.close();
    }
    const runs = await recentRuns(redis, 100);
    const ticks = runs.map((r) => r.tick).sort((a, b) => a - b);
    expect(ticks.length).toBeGreaterThanOrEqual(5);
    expect(new Set(ticks).size).toBe(ticks.length);
    // Consecutive: no tick was skipped between the first and the last.
    expect(ticks.at(-1)! - ticks[0]!).toBe(ticks.length - 1);
    for (const r of runs) expect(r.scheduledAt % intervalMs).toBe(0);
  });
});
