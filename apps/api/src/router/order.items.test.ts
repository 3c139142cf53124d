import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext, uid } from "../../test/context.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  // A short wait: a deadlock shows as orders failing within seconds instead of hanging the suite.
  t = await testContext({ config: { orderProcessingMs: 50, lockWaitMs: 4_000 } });
});
afterAll(() => t.close());

async function products(...stock: number[]): Promise<string[]> {
  const ids = stock.map(() => uid("p"));
  for (const [i, id] of ids.entries()) await t.caller.stock.reset({ productId: id, qty: stock[i]! });
  return ids;
}
const qty = async (productId: string) => (await t.caller.stock.get({ productId })).qty;
const code = (err: unknown) => (err instanceof TRPCError ? err.code : String(err));

describe("an order of several products", () => {
  it("orders of the same two products listed in opposite orders all complete, and the stock adds up", async () => {
    const [a, b] = (await products(100, 100)) as [string, string];
    // Every order starts at once; half list a then b, half b then a. Locking one product after the other in
    // the listed order, the first two would each hold one lock and wait for the other's until LOCK_WAIT_MS.
    const orders = Array.from({ length: 8 }, (_, n) => ({
      orderId: uid("o"),
      items:
        n % 2 === 0
          ? [
              { productId: a, quantity: 1 },
              { productId: b, quantity: 2 },
            ]
          : [
              { productId: b, quantity: 3 },
              { productId: a, quantity: 4 },
            ],
    }));
    const results = await Promise.allSettled(orders.map((o) => t.caller.order.submit(o)));
    expect(results.map((r) => (r.status === "fulfilled" ? "created" : code(r.reason)))).toEqual(
      Array(8).fill("created"),
    );
    expect(await qty(a)).toBe(100 - 4 * (1 + 4));
    expect(await qty(b)).toBe(100 - 4 * (2 + 3));
    for (const [n, r] of results.entries()) {
      if (r.status !== "fulfilled") continue;
      const { order } = r.value;
      expect(order).toMatchObject({ fromStock: true, quantity: n % 2 === 0 ? 3 : 7 });
      expect(order.items.map((i) => [i.productId, i.quantity])).toEqual(
        orders[n]!.items.map((i) => [i.productId, i.quantity]),
      );
      expect(await t.caller.order.get({ orderId: order.orderId })).toEqual(order);
    }
    // Each product's deductions were written by eight grants of its lock, each with a token of its own.
    for (const p of [a, b]) {
      const tokens = results.flatMap((r) =>
        r.status === "fulfilled"
          ? r.value.order.items.filter((i) => i.productId === p).map((i) => i.token)
          : [],
      );
      expect(new Set(tokens).size).toBe(8);
      expect((await t.caller.stock.get({ productId: p })).fence).toBe(Math.max(...(tokens as number[])));
    }
    expect(
      (await t.caller.locks.list({ prefix: "p-" })).locks.filter((l) => [a, b].includes(l.resource)),
    ).toEqual([]);
  });

  it("takes nothing when one product cannot fill its item", async () => {
    const [a, b] = (await products(5, 1)) as [string, string];
    const orderId = uid("o");
    const err = await t.caller.order
      .submit({
        orderId,
        items: [
          { productId: a, quantity: 2 },
          { productId: b, quantity: 2 },
        ],
      })
      .catch((e: unknown) => e);
    expect(code(err)).toBe("PRECONDITION_FAILED");
    expect((err as Error).message).toContain(`product ${b} has 1 left`);
    expect([await qty(a), await qty(b)]).toEqual([5, 1]);
    expect(await t.caller.order.get({ orderId })).toBeNull();
  });

  it("refuses an unknown product before taking any lock", async () => {
    const [a] = (await products(5)) as [string];
    const missing = uid("nope");
    const err = await t.caller.order
      .submit({ orderId: uid("o"), items: [{ productId: a }, { productId: missing }] })
      .catch((e: unknown) => e);
    expect(code(err)).toBe("NOT_FOUND");
    expect(await qty(a)).toBe(5);
    expect(await t.redis.exists(`lock:{${a}}`, `lock:{${missing}}`)).toBe(0);
  });

  it("validates items with clear messages", async () => {
    const cases: [unknown, RegExp][] = [
      [
        { orderId: "x1", productId: "1001", items: [{ productId: "1002" }] },
        /productId .* or items, not both/,
      ],
      [{ orderId: "x2" }, /productId .* or items: the order names neither/],
      [{ orderId: "x3", items: [] }, /1 to 20 items/],
      [
        { orderId: "x4", items: Array.from({ length: 21 }, (_, i) => ({ productId: `p${i}` })) },
        /1 to 20 items/,
      ],
      [
        { orderId: "x5", items: [{ productId: "1001" }, { productId: 1001 }] },
        /product 1001 is listed twice/,
      ],
      [{ orderId: "x6", quantity: 2, items: [{ productId: "1001" }] }, /each item has its quantity/],
      [{ orderId: "x7", items: [{ productId: "a*b" }] }, /1-64 characters/],
      [{ orderId: "x8", items: [{ productId: "1001", quantity: 0 }] }, /.+/],
    ];
    for (const [input, message] of cases) {
      const err = await t.caller.order.submit(input as never).catch((e: unknown) => e);
      expect(code(err), JSON.stringify(input)).toBe("BAD_REQUEST");
      expect((err as Error).message).toMatch(message);
    }
  });
});
