import { createLocks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { freePort } from "../../../../scripts/lib/ports.mjs";
// @ts-expect-error plain .mjs helper without types
import { startRedis } from "../../../../scripts/lib/redis.mjs";
import { createMetrics } from "../metrics.js";
import { redisOptions } from "../redis.js";
import { startJobs } from "./scheduler.js";

interface Line {
  level: number;
  msg: string;
  err?: unknown;
}

function capture() {
  const lines: Line[] = [];
  const logger = pino(
    { level: "info" },
    {
      write(s: string) {
        lines.push(JSON.parse(s) as Line);
      },
    },
  );
  return { lines, logger };
}

const until = async (what: string, ok: () => boolean, timeoutMs = 10_000) => {
  const deadline = performance.now() + timeoutMs;
  while (!ok()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe("cleanup job while Redis is down", () => {
  it("warns once without a stack, and says once when Redis is back", async () => {
    const port = (await freePort()) as number;
    const redis = new Redis({ ...redisOptions, port, host: "127.0.0.1", retryStrategy: () => 50 });
    cleanup.push(() => redis.disconnect());
    const locks = createLocks({ redis, instanceId: "outage-test" });
    cleanup.push(() => locks.close());
    const { lines, logger } = capture();
    const jobs = startJobs({
      redis,
      locks,
      logger,
      metrics: createMetrics(),
      instanceId: "outage-test",
      intervalMs: 100,
      orderRetentionMs: 24 * 3_600_000,
    });
    cleanup.push(() => jobs.stop());

    // Every warning but one: on a loaded machine a timer may fire late, and the scheduler then warns that it
    // skipped that tick, which is right and not what this test is about (it failed a CI run so).
    const jobWarnings = () =>
      lines.filter((l) => l.level === 40 && l.msg !== "job tick fired too late; skipped");
    // Ten ticks with Redis down.
    await new Promise((r) => setTimeout(r, 1_000));
    const warnings = jobWarnings();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(/cleanup job paused: Redis is unreachable/);
    expect(JSON.stringify(warnings[0])).not.toMatch(/stack/);

    const server = await startRedis({ port });
    cleanup.push(() => server.stop());
    await until("the job to say it resumed", () => lines.some((l) => /cleanup job resumed/.test(l.msg)));
    expect(lines.filter((l) => /resumed/.test(l.msg))).toHaveLength(1);
    expect(jobWarnings()).toHaveLength(1);
  });
});
