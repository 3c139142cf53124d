import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { startRedis } from "../../../scripts/lib/redis.mjs";
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
  t = await testContext({ redisUrl: server.url });
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
});
