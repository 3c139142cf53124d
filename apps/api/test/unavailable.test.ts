import { setTimeout as sleep } from "node:timers/promises";
import { lockKey } from "@lockyard/lock";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { startRedis } from "../../../scripts/lib/redis.mjs";
import { stockResource } from "../src/stock/keys.js";
import { testContext, uid } from "./context.js";

let server: {
  url: string;
  kill(sig?: string): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
};
let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  server = await startRedis();
  t = await testContext({ redisUrl: server.url, commandTimeoutMs: 1_500 });
});
afterAll(async () => {
  await t.close();
  await server.stop();
});

describe("Redis going away", () => {
  it("answers SERVICE_UNAVAILABLE fast while Redis is down and recovers by itself", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 3 });
    await server.kill("SIGKILL");
    const started = performance.now();
    for (const call of [
      () => t.caller.stock.get({ productId }),
      () => t.caller.stock.deduct({ productId, mode: "redis" }),
      () => t.caller.order.submit({ orderId: uid("o"), productId, quantity: 1 }),
      () => t.caller.locks.list(),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TRPCError);
      expect((err as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
    }
    expect(performance.now() - started).toBeLessThan(10_000);
    const info = await t.caller.system.info();
    expect(info.redis.reachable).toBe(false);

    await server.restart();
    const deadline = performance.now() + 10_000;
    let stock: unknown;
    while (performance.now() < deadline) {
      stock = await t.caller.stock.get({ productId }).catch(() => undefined);
      if (stock) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The data is gone (no persistence) but the API answers again without a restart.
    expect(stock).toMatchObject({ productId });
  });

  it.each(["redis", "atomic"] as const)(
    "mode %s: a stock write whose reply never came says it may have been applied (and it was)",
    async (mode) => {
      const productId = uid("p");
      await servingAgain();
      // The server restarted empty in the test above: a first acquire finds no script (NOSCRIPT), acquires again
      // and reads in a round trip of its own, which the SIGSTOP below could catch instead of the write (seen once
      // in CI: "Redis is unavailable", rightly, as nothing was written). One deduct first loads the scripts.
      const warm = uid("warm");
      await t.caller.stock.reset({ productId: warm, qty: 1 });
      await t.caller.stock.deduct({ productId: warm, mode });
      await t.caller.stock.reset({ productId, qty: 3 });
      const deducting = t.caller.stock.deduct({ productId, mode, workMs: 600 }).catch((e: unknown) => e);
      // Frozen mid-work (after the lock is taken, before the write): the write goes out to a server that
      // cannot answer before the command timeout.
      if (mode === "redis") await lockTaken(productId);
      else await sleep(150);
      await server.kill("SIGSTOP");
      const err = await deducting;
      await server.kill("SIGCONT");
      expect(err).toBeInstanceOf(TRPCError);
      expect((err as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
      expect((err as TRPCError).message).toMatch(/may have been applied: read stock.get before you retry/);
      await servingAgain();
      expect((await t.caller.stock.get({ productId })).qty).toBe(2);
    },
  );

  it("a write that never left the process keeps the plain try-again answer", async () => {
    const productId = uid("p");
    await servingAgain();
    await t.caller.stock.reset({ productId, qty: 3 });
    const deducting = t.caller.stock
      .deduct({ productId, mode: "atomic", workMs: 300 })
      .catch((e: unknown) => e);
    await sleep(100);
    await server.kill("SIGKILL");
    const err = await deducting;
    await server.restart();
    expect((err as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
    expect((err as TRPCError).message).toBe("Redis is unavailable; try again shortly");
  });
});

async function lockTaken(productId: string): Promise<void> {
  await vi.waitFor(
    async () => expect(await t.redis.exists(lockKey("lock:", stockResource(productId)))).toBe(1),
    {
      timeout: 5_000,
      interval: 10,
    },
  );
}

async function servingAgain(): Promise<void> {
  const deadline = performance.now() + 10_000;
  while ((await t.redis.ping().catch(() => null)) !== "PONG") {
    if (performance.now() > deadline) throw new Error("the test Redis did not come back");
    await sleep(50);
  }
}
