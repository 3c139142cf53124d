// A REST route asked with the wrong method is a 405 naming the right one, not a 404 that says it is not there.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RestServer, startRest } from "../../test/seed-rest-server.js";

let rest: RestServer;
beforeAll(async () => {
  rest = await startRest();
});
afterAll(() => rest.close());

describe("the wrong method on an existing REST route", () => {
  it.each([
    ["GET", "/api/stock/deduct", "POST"],
    ["GET", "/api/order/submit", "POST"],
    ["GET", "/api/stock/reset", "POST"],
    ["POST", "/api/stock/status?productId=1001", "GET"],
    ["POST", "/api/order/status?orderId=1", "GET"],
    // The adapter matches paths whatever their case and trailing slash.
    ["GET", "/API/Stock/Deduct/", "POST"],
  ])("%s %s is a 405 with Allow: %s", async (method, path, allow) => {
    const res = await fetch(`${rest.url}${path}`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe(allow);
    const body = (await res.json()) as { message: string };
    expect(Object.keys(body)).toEqual(["message"]);
    expect(body.message).toContain(`use ${allow}`);
  });

  it("an unknown path is still a 404", async () => {
    expect((await fetch(`${rest.url}/api/stock/nope`)).status).toBe(404);
    expect((await fetch(`${rest.url}/api/stock/nope`, { method: "POST" })).status).toBe(404);
  });
});
