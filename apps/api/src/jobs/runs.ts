import type { Redis } from "ioredis";
import type { JobRun } from "../types.js";

export const JOB_RUNS_KEY = "jobs:cleanup:runs";
const KEEP = 100;

export async function recordRun(redis: Redis, run: JobRun): Promise<void> {
  await redis
    .multi()
    .lpush(JOB_RUNS_KEY, JSON.stringify(run))
    .ltrim(JOB_RUNS_KEY, 0, KEEP - 1)
    .exec();
}

export async function recentRuns(redis: Redis, limit: number): Promise<JobRun[]> {
  const raw = await redis.lrange(JOB_RUNS_KEY, 0, limit - 1);
  return raw.map((s) => JSON.parse(s) as JobRun);
}
