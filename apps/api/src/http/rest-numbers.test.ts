// The REST face's whole numbers (workMs, stock, quantity): plain decimal digits only, from the query string or
// the body. trpc-to-openapi's own coercion (Number(value)) read "0x10" as 16, "" as 0 and a body's null as 0.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, type RestServer, startRest } from "../../test/seed-rest-server.js";

let rest: RestServer;
beforeAll(async () => {
  rest = await startRest();
});
afterAll(() => rest.close());

async function expect400(res: Response, field: string) {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { message: string };
  expect(Object.keys(body)).toEqual(["message"]);
  expect(body.message).toMatch(new RegExp(`^${field}: `));
  return body.message;
}

describe("whole numbers in the query string", () => {
  it.each(["0x10", "", "1e3", "%205", "5%20", "+5", "5.0", "1_0", "0b1", "Infinity"])(
    "workMs=%s is a 400 naming workMs, and nothing is sold",
    async (value) => {
      const productId = await rest.product(10);
      const res = await fetch(`${rest.url}/api/stock/deduct?productId=${productId}&workMs=${value}`, {
        method: "POST",
      });
      const message = await expect400(res, "workMs");
      expect(message).toMatch(/decimal digits/);
      expect(await rest.stock(productId)).toBe(10);
    },
  );

  it("stock= and quantity=0x2 are 400s naming the field; plain digits are read as numbers", async () => {
    const productId = await rest.product(10);
    await expect400(
      await fetch(`${rest.url}/api/stock/reset?productId=${productId}&stock=`, { method: "POST" }),
      "stock",
    );
    expect(await rest.stock(productId)).toBe(10);
    await expect400(
      await postJson(`${rest.url}/api/order/submit?quantity=0x2`, '{"orderId":"rest-numbers"}'),
      "quantity",
    );
    const ok = await fetch(`${rest.url}/api/stock/reset?productId=${productId}&stock=42`, { method: "POST" });
    expect(await ok.json()).toEqual({ stock: 42 });
    const deduct = await fetch(`${rest.url}/api/stock/deduct?productId=${productId}&workMs=16`, {
      method: "POST",
    });
    expect(await deduct.json()).toEqual({ success: true, remainingStock: 41 });
  });
});

describe("whole numbers in a JSON body", () => {
  it.each([[null], [true], [[]], [""], ["0x10"], [1.5]])(
    "stock: %j is a 400 naming stock; the stock is kept",
    async (v) => {
      const productId = await rest.product(10);
      const res = await postJson(`${rest.url}/api/stock/reset`, JSON.stringify({ productId, stock: v }));
      await expect400(res, "stock");
      expect(await rest.stock(productId)).toBe(10);
    },
  );
});
