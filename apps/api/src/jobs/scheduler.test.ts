import { createLocks, lockKey } from "@lockyard/lock";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createMetrics } from "../metrics.js";
import { recentRuns } from "./runs.js";
import { JOB_RESOURCE, startJobs } from "./scheduler.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

describe("cleanup job", () => {
  it("exactly one of several instances runs each tick", async () => {
    const intervalMs = 300;
    // An API process of an earlier test file may have won a tick with its long lease (JOB_INTERVAL_MS 1 h: a
    // wall-clock hour boundary during that file) and been stopped holding it: this test starts from no holder.
    await redis.del("jobs:cleanup:runs", lockKey("lock:", JOB_RESOURCE));
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
