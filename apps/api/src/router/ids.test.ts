import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext } from "../../test/context.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext({ config: { orderProcessingMs: 0 } });
});
afterAll(() => t.close());

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: unknown) => (e instanceof TRPCError ? e.code : String(e)),
  );

// A number no other test or run uses, so the keys start empty.
const fresh = () => 900_000_000 + Math.floor(Math.random() * 99_999_999);

describe("ids like the seed's (1001, { orderId: 100001 })", () => {
  it("a numeric product id and its decimal string name the same stock", async () => {
    const n = fresh();
    await t.caller.stock.reset({ productId: n, qty: 7 });
    expect(await t.caller.stock.get({ productId: String(n) })).toMatchObject({
      productId: String(n),
      qty: 7,
    });
    const sale = await t.caller.stock.deduct({ productId: String(n), mode: "atomic" });
    expect(sale).toMatchObject({ ok: true, stock: 6 });
    expect((await t.caller.stock.get({ productId: n })).qty).toBe(6);
    expect(await t.redis.hget(`stock:{${n}}`, "qty")).toBe("6");
  });

  it("a numeric order id and its string are one order: the second submit replays the first", async () => {
    const n = fresh();
    const first = await t.caller.order.submit({ orderId: n, productId: 1001, quantity: 1 });
    expect(first).toMatchObject({ replayed: false, order: { orderId: String(n), productId: "1001" } });
    const again = await t.caller.order.submit({ orderId: String(n), productId: "1001", quantity: 1 });
    expect(again).toEqual({ order: first.order, replayed: true });
    expect(await t.caller.order.get({ orderId: n })).toEqual(first.order);
  });

  it("anything else is BAD_REQUEST, with a message that says what an id may be", async () => {
    for (const productId of [
      0,
      -1,
      1.5,
      2 ** 53,
      Number.NaN,
      "",
      "a b",
      "{1001}",
      null,
      true,
      [1001],
      { id: 1 },
    ]) {
      expect(await codeOf(t.caller.stock.get({ productId } as never)), JSON.stringify(productId)).toBe(
        "BAD_REQUEST",
      );
    }
    // Digits are the number they spell, written plainly, on tRPC as on REST: "0100001" is no order of its own.
    for (const orderId of ["0", "-1", "00100001", "99999999999999999999"]) {
      const refused = await t.caller.order.submit({ orderId, productId: "1001" }).catch((e: unknown) => e);
      expect((refused as TRPCError).code, orderId).toBe("BAD_REQUEST");
      expect((refused as TRPCError).message).toMatch(/plain digits \(no sign, no leading zeros\)/);
    }
    expect(await codeOf(t.caller.stock.get({ productId: "01001" }))).toBe("BAD_REQUEST");
    const err = await t.caller.order.submit({ orderId: 0, productId: "1001" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCError);
    expect((err as TRPCError).message).toMatch(/whole number from 1/);
    const union = await t.caller.stock.get({ productId: null } as never).catch((e: unknown) => e);
    expect((union as TRPCError).message).toMatch(/positive whole number or 1-64 characters/);
  });
});
