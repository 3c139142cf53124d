import { setTimeout as sleep } from "node:timers/promises";
import { lockKey } from "@lockyard/lock";
import { TRPCError } from "@trpc/server";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { startReplyCutter } from "../../../scripts/lib/reply-cutter.mjs";
import { seedRouter } from "../src/router/seed.js";
import { stockResource } from "../src/stock/keys.js";
import { createCallerFactory } from "../src/trpc.js";
import { testContext, uid } from "./context.js";

let cutter: Awaited<ReturnType<typeof startReplyCutter>>;
let t: Awaited<ReturnType<typeof testContext>>;
let direct: Redis;
beforeAll(async () => {
  cutter = await startReplyCutter(inject("redisUrl"));
  t = await testContext({ redisUrl: cutter.url, commandTimeoutMs: 1_500 });
  direct = new Redis(inject("redisUrl"));
});
afterAll(async () => {
  await t.close();
  await cutter.close();
  direct.disconnect();
});

/**
 * Replies are dropped from mid-work on (once `lockedProduct`'s stock lock is held, its read answered), so the
 * write runs on Redis but its reply never arrives (`writtenProduct`'s qty reads `qtyAfter`); then the
 * connection is cut.
 */
async function cutRepliesOnceWritten(
  lockedProduct: string | undefined,
  writtenProduct: string,
  qtyAfter: string,
): Promise<void> {
  const within = { timeout: 5_000, interval: 10 };
  if (lockedProduct !== undefined) {
    const key = lockKey("lock:", stockResource(lockedProduct));
    await vi.waitFor(async () => expect(await direct.exists(key)).toBe(1), within);
  }
  await sleep(100);
  cutter.holdReplies();
  await vi.waitFor(
    async () => expect(await direct.hget(`stock:{${writtenProduct}}`, "qty")).toBe(qtyAfter),
    within,
  );
  cutter.cut();
}

describe("a connection lost after the write ran but before its reply came back", () => {
  it.each(["redis", "atomic"] as const)(
    "mode %s: the write is not sent again on reconnect; the answer says it may have been applied",
    async (mode) => {
      const productId = uid("p");
      await t.caller.stock.reset({ productId, qty: 3 });
      const deducting = t.caller.stock.deduct({ productId, mode, workMs: 600 }).catch((e: unknown) => e);
      await cutRepliesOnceWritten(mode === "redis" ? productId : undefined, productId, "2");
      const answer = await deducting;
      // ioredis by default re-sends unanswered commands after a reconnect: the decrement would run twice.
      await sleep(300);
      expect(await direct.hget(`stock:{${productId}}`, "qty")).toBe("2");
      expect(answer).toBeInstanceOf(TRPCError);
      expect((answer as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
      expect((answer as TRPCError).message).toMatch(/may have been applied/);
      expect((await t.caller.stock.get({ productId })).qty).toBe(2);
    },
  );
});

describe("an order of items whose stock write lost its reply", () => {
  it("is not recorded, and the answer says its writes may have been applied (a retry would take the stock twice)", async () => {
    const [a, b] = [uid("p"), uid("p")];
    await t.caller.stock.reset({ productId: a, qty: 3 });
    await t.caller.stock.reset({ productId: b, qty: 3 });
    const orderId = uid("o");
    const submitting = t.caller.order
      .submit({
        orderId,
        items: [
          { productId: a, quantity: 1 },
          { productId: b, quantity: 1 },
        ],
      })
      .catch((e: unknown) => e);
    // In the processing (300 ms, under both stock locks), replies stop: the writes run, their answers never come.
    await cutRepliesOnceWritten(b, b, "2");
    const answer = await submitting;
    expect(answer).toBeInstanceOf(TRPCError);
    expect((answer as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
    expect((answer as TRPCError).message).toMatch(/may have been applied and no order was recorded/);
    expect(await direct.exists(`order:{${orderId}}`)).toBe(0);
  });
});

describe("a stock reset whose reply timed out", () => {
  it("says it may have been applied (it was), for tRPC's stock.reset and the seed's /api/stock/reset alike", async () => {
    for (const reset of [
      (productId: string) => t.caller.stock.reset({ productId, qty: 50 }),
      (productId: string) => createCallerFactory(seedRouter)(t.ctx).stock.reset({ productId, stock: 50 }),
    ]) {
      // The step before cut the connection; ioredis reconnects.
      await vi.waitFor(() => t.redis.ping(), { timeout: 5_000, interval: 50 });
      const productId = uid("p");
      await t.caller.stock.reset({ productId, qty: 3 });
      cutter.holdReplies();
      const answer = await reset(productId).catch((e: unknown) => e);
      cutter.cut();
      expect(await direct.hget(`stock:{${productId}}`, "qty")).toBe("50");
      expect(answer).toBeInstanceOf(TRPCError);
      expect((answer as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
      expect((answer as TRPCError).message).toMatch(/may have been applied: read stock.get before you retry/);
    }
  });
});
