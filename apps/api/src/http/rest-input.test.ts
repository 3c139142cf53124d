// Where a REST POST's input comes from: the query string (as the seed sends it) and a JSON body together, and
// a 400 saying what to fix for a body that is not an object of fields.
import { validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, type RestServer, startRest } from "../../test/seed-rest-server.js";

let rest: RestServer;
beforeAll(async () => {
  rest = await startRest();
  // The default product: a request that loses its query string deducts this one.
  await rest.caller.stock.reset({ productId: "1001", qty: 1_000_000 });
});
afterAll(() => rest.close());

async function expect400(res: Response, message: RegExp) {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { message: string };
  expect(Object.keys(body)).toEqual(["message"]);
  expect(body.message).toMatch(message);
}

describe("query string and JSON body together", () => {
  it("deduct: the query's productId and the body's mode both apply", async () => {
    const productId = await rest.product(10);
    const res = await postJson(`${rest.url}/api/stock/deduct?productId=${productId}`, '{"mode":"atomic"}');
    expect(await res.json()).toEqual({ success: true, remainingStock: 9 });
    expect(await rest.stock(productId)).toBe(9);
    expect(await rest.stock("1001")).toBe(1_000_000);
  });

  it("order submit: productId and quantity from the query, orderId from the body, all stored", async () => {
    const productId = await rest.product(10);
    const orderId = Math.floor(Math.random() * 1e9) + 1;
    const res = await postJson(
      `${rest.url}/api/order/submit?productId=${productId}&quantity=5`,
      JSON.stringify({ orderId }),
    );
    expect(await res.json()).toEqual({ success: true, orderId, replayed: false });
    const order = await (await fetch(`${rest.url}/api/order/status?orderId=${orderId}`)).json();
    expect(order).toMatchObject({ orderId: String(orderId), productId, quantity: 5 });
  });

  it("a field given in both places with the same value is fine; with different values it is a 400", async () => {
    const productId = await rest.product(10);
    const same = await postJson(
      `${rest.url}/api/stock/deduct?productId=${productId}&workMs=0`,
      JSON.stringify({ productId, workMs: 0 }),
    );
    expect(await same.json()).toEqual({ success: true, remainingStock: 9 });
    const differ = await postJson(
      `${rest.url}/api/stock/deduct?productId=${productId}`,
      '{"productId":1001}',
    );
    await expect400(differ, new RegExp(`^productId: .*"${productId}" in the query string.*1001 in the body`));
    expect(await rest.stock(productId)).toBe(9);
  });

  it("a field given twice in the query string is a 400, not the last one silently", async () => {
    const productId = await rest.product(10);
    const res = await fetch(`${rest.url}/api/stock/deduct?productId=${productId}&productId=1001`, {
      method: "POST",
    });
    await expect400(res, /^productId: given 2 times in the query string/);
    expect(await rest.stock(productId)).toBe(10);
  });
});

describe("how a body is sent", () => {
  it("content-type application/json with a charset is read; another type is a 415 saying what to send", async () => {
    const productId = await rest.product(10);
    const charset = await fetch(`${rest.url}/api/stock/deduct`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ productId }),
    });
    expect(await charset.json()).toEqual({ success: true, remainingStock: 9 });
    const form = await fetch(`${rest.url}/api/stock/deduct?productId=${productId}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "mode=atomic",
    });
    expect(form.status).toBe(415);
    expect(await form.json()).toEqual({
      message: expect.stringMatching(/^a body needs content-type: application\/json .*query parameters/),
    });
    expect(await rest.stock(productId)).toBe(9);
  });

  it("a body the API would not read as sent is a 415: a content-encoding, or a charset other than utf-8", async () => {
    const productId = await rest.product(10);
    const body = JSON.stringify({ productId });
    for (const [header, message] of [
      [
        { "content-encoding": "gzip" },
        /^content-encoding "gzip" is not decoded here: send the JSON body uncompressed$/,
      ],
      [
        { "content-type": "application/json; charset=latin1" },
        /^a JSON body is read as UTF-8: .*got charset=latin1/,
      ],
      [{ "content-type": 'application/json; charset="ISO-8859-1"' }, /got charset=iso-8859-1\)$/],
    ] as const) {
      const res = await fetch(`${rest.url}/api/stock/deduct`, {
        method: "POST",
        headers: { "content-type": "application/json", ...header },
        body,
      });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual({ message: expect.stringMatching(message) });
    }
    expect(await rest.stock(productId)).toBe(10);
    for (const headers of [
      { "content-type": "application/json; charset=UTF-8" } as Record<string, string>,
      { "content-type": "application/json;charset=utf8", "content-encoding": "identity" },
    ]) {
      const res = await fetch(`${rest.url}/api/stock/deduct`, { method: "POST", headers, body });
      expect(res.status).toBe(200);
    }
    expect(await rest.stock(productId)).toBe(8);
  });

  it("a body over the cap is a 413, whether its length is declared or not", async () => {
    const big = JSON.stringify({ productId: "1001", pad: "x".repeat(70_000) });
    const declared = await postJson(`${rest.url}/api/stock/deduct`, big);
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({ message: "the body is larger than 65536 bytes" });
    const chunked = await fetch(`${rest.url}/api/stock/deduct`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new Blob([big]).stream(),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await rest.stock("1001")).toBe(1_000_000);
  });
});

describe("a body that is not a JSON object of fields", () => {
  const routes = ["/api/stock/deduct", "/api/order/submit", "/api/stock/reset"];

  it.each([
    ["null", "null"],
    ["[]", "an array"],
    ["5", "a number"],
    ['"1001"', "a string"],
    ["true", "a boolean"],
  ])("%s is a 400 saying the body must be an object (no defaults applied)", async (body, got) => {
    for (const route of routes) {
      await expect400(
        await postJson(`${rest.url}${route}?productId=1001`, body),
        new RegExp(`^the JSON body must be an object of fields.*; got ${got}$`),
      );
    }
    expect(await rest.stock("1001")).toBe(1_000_000);
  });

  it("a body nested 10 000 deep is a 400 on every POST route, arrays and objects alike", async () => {
    const arrays = "[".repeat(10_000) + "]".repeat(10_000);
    const objects = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    for (const route of routes) {
      await expect400(await postJson(`${rest.url}${route}`, arrays), /^the JSON body must be an object/);
      await expect400(await postJson(`${rest.url}${route}`, objects), /^the JSON body nests deeper than \d+/);
    }
    expect(await rest.stock("1001")).toBe(1_000_000);
  });

  it("a body that is not JSON is a 400 saying so; an empty body takes the query alone", async () => {
    await expect400(
      await postJson(`${rest.url}/api/stock/deduct`, "{productId: 1}"),
      /^the body is not valid JSON/,
    );
    const productId = await rest.product(10);
    const empty = await postJson(`${rest.url}/api/stock/deduct?productId=${productId}`, "");
    expect(await empty.json()).toEqual({ success: true, remainingStock: 9 });
  });
});

interface OpenApiDoc {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters: { in: string; name: string; description?: string }[];
        requestBody: { required: boolean; description: string };
      }
    >
  >;
}

describe("the OpenAPI document", () => {
  it("lists every POST field as a query parameter too, and stays valid OpenAPI 3.1", async () => {
    const doc = (await (await fetch(`${rest.url}/api/openapi.json`)).json()) as OpenApiDoc;
    const submit = doc.paths["/api/order/submit"]!.post!;
    const query = submit.parameters.filter((p) => p.in === "query");
    expect(query.map((p) => p.name)).toEqual(["orderId", "productId", "quantity"]);
    expect(query[0]?.description).toMatch(/^Required, here or in the body/);
    expect(submit.requestBody.required).toBe(false);
    expect(submit.requestBody.description).toMatch(/orderId must be given in one or the other/);
    // validate() dereferences in place: give it a copy.
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });
});
