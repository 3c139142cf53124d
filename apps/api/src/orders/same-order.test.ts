// An order id reused with a different payload replayed the first order as `replayed: true`: the client took its
// new order as placed while nothing of it was. It is a CONFLICT now; the same payload again still replays.
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uid } from "../../test/context.js";
import { type RestServer, startRest } from "../../test/seed-rest-server.js";

let rest: RestServer;
beforeAll(async () => {
  rest = await startRest({ config: { orderProcessingMs: 10 } });
});
afterAll(() => rest.close());

async function errorOf(p: Promise<unknown>): Promise<TRPCError | null> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  return err instanceof TRPCError ? err : null;
}

describe("an order id submitted again", () => {
  it("with another product or quantity: CONFLICT naming the stored order; the same one replays", async () => {
    const orderId = uid("o");
    const first = await rest.caller.order.submit({ orderId, productId: "1001", quantity: 2 });
    for (const other of [
      { productId: "1002", quantity: 2 },
      { productId: "1001", quantity: 3 },
    ]) {
      const err = await errorOf(rest.caller.order.submit({ orderId, ...other }));
      expect(err?.code).toBe("CONFLICT");
      expect(err?.message).toMatch(
        new RegExp(
          `order id ${orderId} was already used for a different order \\(2 × 1001 .*submit it under a new order id`,
        ),
      );
    }
    expect(await rest.caller.order.submit({ orderId, productId: "1001", quantity: 2 })).toEqual({
      order: first.order,
      replayed: true,
    });
  });

  it("with other items, or as a seed order: CONFLICT and no stock taken; the same items in any order replay", async () => {
    const [a, b] = [await rest.product(10), await rest.product(10)];
    const orderId = uid("o");
    const items = [
      { productId: a, quantity: 1 },
      { productId: b, quantity: 2 },
    ];
    await rest.caller.order.submit({ orderId, items });
    for (const other of [
      { items: [{ productId: a, quantity: 1 }] },
      { items: [...items, { productId: await rest.product(10), quantity: 1 }] },
      { items: [{ productId: a, quantity: 2 }, items[1]!] },
      { productId: a, quantity: 1 },
    ]) {
      expect((await errorOf(rest.caller.order.submit({ orderId, ...other })))?.code).toBe("CONFLICT");
    }
    expect([await rest.stock(a), await rest.stock(b)]).toEqual([9, 8]);
    const again = await rest.caller.order.submit({ orderId, items: [...items].reverse() });
    expect(again.replayed).toBe(true);
  });

  it("POST /api/order/submit answers 409 with a { message }; the same payload replays with 200", async () => {
    const orderId = 800_000_000 + Math.floor(Math.random() * 99_999_999);
    const submit = (body: object) =>
      fetch(`${rest.url}/api/order/submit`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ orderId, ...body }),
      });
    expect((await submit({ productId: 1001, quantity: 1 })).status).toBe(200);
    const reused = await submit({ productId: 1001, quantity: 5 });
    expect(reused.status).toBe(409);
    expect(((await reused.json()) as { message: string }).message).toMatch(
      /already used for a different order \(1 × 1001 .*\); this one \(5 × 1001 /,
    );
    const replay = await submit({ productId: "1001" });
    expect(await replay.json()).toEqual({ success: true, orderId, replayed: true });
  });
});
