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
    ["PUT", "/api/stock/deduct?productId=1001", "POST"],
    ["DELETE", "/api/order/submit", "POST"],
    ["PATCH", "/api/stock/reset", "POST"],
    ["POST", "/api/stock/status?productId=1001", "GET, HEAD"],
    ["POST", "/api/order/status?orderId=1", "GET, HEAD"],
    ["PUT", "/api/stock/status?productId=1001", "GET, HEAD"],
    ["POST", "/api/openapi.json", "GET, HEAD"],
    ["DELETE", "/api/docs", "GET, HEAD"],
    // The adapter matches paths whatever their case and trailing slash.
    ["GET", "/API/Stock/Deduct/", "POST"],
  ])("%s %s is a 405 with Allow: %s", async (method, path, allow) => {
    const res = await fetch(`${rest.url}${path}`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe(allow);
    const body = (await res.json()) as { message: string };
    expect(Object.keys(body)).toEqual(["message"]);
    expect(body.message).toContain(`use ${allow.replace(", ", " or ")}`);
  });

  it("HEAD on a GET route answers as GET does, without the body; on a POST route it is a 405", async () => {
    const productId = await rest.product(7);
    const head = await fetch(`${rest.url}/api/stock/status?productId=${productId}`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await head.text()).toBe("");
    expect((await fetch(`${rest.url}/api/openapi.json`, { method: "HEAD" })).status).toBe(200);
    const bad = await fetch(`${rest.url}/api/stock/status?productId=0`, { method: "HEAD" });
    expect(bad.status).toBe(400);
    const post = await fetch(`${rest.url}/api/stock/deduct?productId=${productId}`, { method: "HEAD" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("POST");
    expect(await rest.stock(productId)).toBe(7);
  });

  it("an unknown path is still a 404, whatever the method", async () => {
    for (const method of ["GET", "POST", "HEAD", "PUT", "DELETE"]) {
      const res = await fetch(`${rest.url}/api/stock/nope`, { method });
      expect(res.status, method).toBe(404);
      if (method !== "HEAD") expect(Object.keys((await res.json()) as object)).toEqual(["message"]);
    }
  });
});
