import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext, uid } from "../../test/context.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext({ config: { orderProcessingMs: 100 } });
});
afterAll(() => t.close());

describe("order", () => {
  it("creates an order once and replays it afterwards", async () => {
    const orderId = uid("o");
    const first = await t.caller.order.submit({ orderId, productId: "1001", quantity: 2 });
    expect(first.replayed).toBe(false);
    expect(first.order).toMatchObject({ orderId, productId: "1001", quantity: 2, status: "created" });
    const again = await t.caller.order.submit({ orderId, productId: "1001", quantity: 2 });
    expect(again).toEqual({ order: first.order, replayed: true });
    expect(await t.caller.order.get({ orderId })).toEqual(first.order);
    expect((await t.caller.order.list({ limit: 200 })).orders.map((o) => o.orderId)).toContain(orderId);
    expect(await t.caller.order.get({ orderId: uid("missing") })).toBeNull();
  });

  it("concurrent duplicates: exactly one creates, the rest get CONFLICT", async () => {
    const orderId = uid("o");
    const settled = await Promise.allSettled(
      Array.from({ length: 10 }, () => t.caller.order.submit({ orderId, productId: "1001", quantity: 1 })),
    );
    const created = settled.filter((s) => s.status === "fulfilled" && !s.value.replayed);
    const conflicts = settled.filter(
      (s) => s.status === "rejected" && s.reason instanceof TRPCError && s.reason.code === "CONFLICT",
    );
    expect(created).toHaveLength(1);
    expect(created.length + conflicts.length).toBe(10);
    // The submit lock is released once the order is stored.
    expect(await t.locks.list({ match: `order:submit:${orderId}` })).toHaveLength(0);
  });

  it("validates ids and quantities", async () => {
    for (const input of [
      { orderId: "", productId: "1001", quantity: 1 },
      { orderId: "a*", productId: "1001", quantity: 1 },
      { orderId: "ok", productId: "1001", quantity: 0 },
      { orderId: "ok", productId: "1001", quantity: 1.5 },
    ]) {
      const err = await t.caller.order.submit(input).catch((e: unknown) => e);
      expect((err as TRPCError).code).toBe("BAD_REQUEST");
    }
  });
});
