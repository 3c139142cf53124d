// A deduct's waitedMs: from its start to the moment its guarded section began, in every mode. The work done
// inside is not waiting; a holder queued behind another waits out the other's work; a deduct that gave up
// waiting reports the whole wait.
import { createRedlock } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { startRedis } from "../../../../scripts/lib/redis.mjs";
import { testContext, uid } from "../../test/context.js";
import type { StockMode } from "../schemas.js";
import { stockResource } from "../stock/keys.js";

const WORK_MS = 300;
/** Timers and performance.now() may disagree by a millisecond or so. */
const CLOCK_SLACK_MS = 5;

let t: Awaited<ReturnType<typeof testContext>>;
let node: { url: string; stop(): Promise<void> };
let redlockClient: Redis;
beforeAll(async () => {
  node = await startRedis();
  redlockClient = new Redis(node.url);
  redlockClient.on("error", () => {});
  const redlock = createRedlock({ clients: [redlockClient], leaseMs: 2_000 });
  t = await testContext({ withPostgres: true, redlock, config: { lockWaitMs: 5_000 } });
});
afterAll(async () => {
  try {
    await t?.close();
  } finally {
    redlockClient?.disconnect();
    await node?.stop();
  }
});

async function twoAtOnce(mode: StockMode) {
  const productId = uid("p");
  await t.caller.stock.reset({ productId, qty: 10 });
  const both = await Promise.all(
    [0, 1].map(() => t.caller.stock.deduct({ productId, mode, workMs: WORK_MS })),
  );
  for (const r of both) expect(r).toMatchObject({ ok: true, mode });
  return both.map((r) => r.waitedMs).sort((a, b) => a - b) as [number, number];
}

describe("stock.deduct waitedMs", () => {
  it.each(["local", "redis", "postgres", "redlock"] as const)(
    "%s: the first holder's excludes its work, the second's covers the first's work",
    async (mode) => {
      const [first, second] = await twoAtOnce(mode);
      expect(first).toBeLessThan(WORK_MS);
      expect(second).toBeGreaterThanOrEqual(WORK_MS - CLOCK_SLACK_MS);
    },
  );

  it.each(["none", "atomic"] as const)("%s: nothing to wait for, the work is not counted", async (mode) => {
    const [first, second] = await twoAtOnce(mode);
    expect(first).toBeLessThan(WORK_MS);
    expect(second).toBeLessThan(WORK_MS);
  });

  it("a deduct that timed out waiting for the lock reports the whole wait", async () => {
    const lockWaitMs = 200;
    const short = await testContext({ config: { lockWaitMs } });
    try {
      const productId = uid("p");
      await short.caller.stock.reset({ productId, qty: 10 });
      const held = await short.locks.acquire(stockResource(productId), { leaseMs: 5_000 });
      try {
        const r = await short.caller.stock.deduct({ productId, mode: "redis" });
        expect(r).toMatchObject({ ok: false, reason: "lock-timeout", stock: null });
        expect(r.waitedMs).toBeGreaterThanOrEqual(lockWaitMs - CLOCK_SLACK_MS);
      } finally {
        await held.release();
      }
    } finally {
      await short.close();
    }
  });
});
