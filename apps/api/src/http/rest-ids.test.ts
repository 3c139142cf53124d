// The REST face's ids are the seed's C# `long`s when given in digits: "0", "-5" and "00100001" were their own
// Redis keys, so `orderId <= 0` created orders and "00100001" slipped past the double submit of 100001.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, type RestServer, startRest } from "../../test/seed-rest-server.js";

let rest: RestServer;
beforeAll(async () => {
  rest = await startRest();
});
afterAll(() => rest.close());

async function expect400(res: Response, field: string, got: string) {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { message: string };
  expect(Object.keys(body)).toEqual(["message"]);
  expect(body.message).toBe(
    `${field}: expected a whole number from 1 to 9223372036854775807 in plain digits (no sign, no leading zeros), ` +
      `or a name of letters, digits, _ and - that is not all digits; got ${JSON.stringify(got)}`,
  );
}

const freshId = () => String(800_000_000 + Math.floor(Math.random() * 99_999_999));
const post = (path: string) => fetch(`${rest.url}${path}`, { method: "POST" });

describe("an order id in digits", () => {
  it.each(["0", "-1", "-5", "00"])(
    "?orderId=%s and a body's string are 400s, and no order is stored",
    async (orderId) => {
      await expect400(await post(`/api/order/submit?orderId=${orderId}`), "orderId", orderId);
      await expect400(
        await postJson(`${rest.url}/api/order/submit`, JSON.stringify({ orderId })),
        "orderId",
        orderId,
      );
      expect(await rest.redis.exists(`order:{${orderId}}`)).toBe(0);
      await expect400(await fetch(`${rest.url}/api/order/status?orderId=${orderId}`), "orderId", orderId);
    },
  );

  it("with leading zeros is a 400, not a second order beside the unpadded one", async () => {
    const orderId = freshId();
    const first = await postJson(
      `${rest.url}/api/order/submit`,
      JSON.stringify({ orderId: Number(orderId) }),
    );
    expect(await first.json()).toEqual({ success: true, orderId: Number(orderId), replayed: false });
    await expect400(await post(`/api/order/submit?orderId=00${orderId}`), "orderId", `00${orderId}`);
    expect(await rest.redis.exists(`order:{00${orderId}}`)).toBe(0);
  });

  it("up to 2^63-1 (a long) as a string is an order; one more is a 400", async () => {
    const max = "9223372036854775807";
    const ok = await post(`/api/order/submit?orderId=${max}&productId=${freshId()}`);
    expect((await ok.json()) as object).toMatchObject({ success: true, orderId: max });
    await expect400(
      await post(`/api/order/submit?orderId=9223372036854775808`),
      "orderId",
      "9223372036854775808",
    );
  });
  it("a JSON number past 2^53-1 is a 400 that says to send it as a string, and no order is stored", async () => {
    // JSON.parse has already rounded it (100000000000000001 reads as 100000000000000000): using it would
    // store another order than the client sent.
    const res = await postJson(`${rest.url}/api/order/submit`, '{"orderId":100000000000000001}');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(
      /^orderId: a numeric id above 2\^53-1 \(9007199254740991\) loses digits as a JSON number: send it as a string of digits/,
    );
    expect(await rest.redis.exists("order:{100000000000000000}", "order:{100000000000000001}")).toBe(0);
  });
});

describe("a product id in digits", () => {
  it.each(["01001", "-1", "0", "99999999999999999999999", "9".repeat(64)])(
    "productId=%s is a 400 on every route, not another product (or a 404)",
    async (productId) => {
      await expect400(await post(`/api/stock/deduct?productId=${productId}`), "productId", productId);
      await expect400(await post(`/api/stock/reset?productId=${productId}&stock=5`), "productId", productId);
      await expect400(
        await fetch(`${rest.url}/api/stock/status?productId=${productId}`),
        "productId",
        productId,
      );
      await expect400(
        await post(`/api/order/submit?orderId=${freshId()}&productId=${productId}`),
        "productId",
        productId,
      );
    },
  );

  it("a name that is not all digits (the dashboard's demo products) is still a product", async () => {
    const productId = await rest.product(3);
    expect(productId).toMatch(/^rest-/);
    const res = await post(`/api/stock/deduct?productId=${productId}`);
    expect(await res.json()).toEqual({ success: true, remainingStock: 2 });
    const named = await post(`/api/stock/reset?productId=-1a&stock=4`);
    expect(await named.json()).toEqual({ stock: 4 });
  });
});
