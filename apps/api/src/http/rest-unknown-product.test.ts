// A product nobody created: status said `{ "stock": 0 }` (sold out) while deduct said 404 "no product".
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RestServer, startRest } from "../../test/seed-rest-server.js";

let rest: RestServer;
beforeAll(async () => {
  rest = await startRest();
});
afterAll(() => rest.close());

it("GET /api/stock/status of a product that does not exist is deduct's 404, with the same message", async () => {
  const productId = String(900_000_000 + Math.floor(Math.random() * 99_999_999));
  const deduct = await fetch(`${rest.url}/api/stock/deduct?productId=${productId}`, { method: "POST" });
  const status = await fetch(`${rest.url}/api/stock/status?productId=${productId}`);
  expect([deduct.status, status.status]).toEqual([404, 404]);
  const message = { message: `no product ${productId} (stock.reset creates one)` };
  expect(await deduct.json()).toEqual(message);
  expect(await status.json()).toEqual(message);

  await fetch(`${rest.url}/api/stock/reset?productId=${productId}&stock=0`, { method: "POST" });
  const soldOut = await fetch(`${rest.url}/api/stock/status?productId=${productId}`);
  expect(await soldOut.json()).toEqual({ stock: 0 });
});
