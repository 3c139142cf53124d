// What the guard (guard.ts) refuses before any route runs: under /api/ the seed's `{ message }`, like every other
// /api error; elsewhere `{ error }` as before. The server below routes as server.ts does.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext } from "../../test/context.js";
import { ClientLimits } from "./client-limits.js";
import { applyCors } from "./cors.js";
import { guardRequest } from "./guard.js";
import { baseHeaders, plain } from "./headers.js";
import { createRestHandler } from "./rest.js";

const DASHBOARD = "http://dashboard.test";
let t: Awaited<ReturnType<typeof testContext>>;
let server: Server;
let port: number;

beforeAll(async () => {
  t = await testContext();
  const rest = createRestHandler(t.ctx, { maxBodySize: 64 * 1024 });
  const origins = new Set([DASHBOARD]);
  const limits = new ClientLimits({ connections: 1_000, streams: 20 });
  const host = { port: () => port, allowed: [], apiUrls: [] };
  server = createServer((req, res) => {
    baseHeaders(res);
    if (guardRequest(req, res, { host, origins, limits, streamPaths: new Set() })) return;
    if (applyCors(req, res, origins)) return;
    if ((req.url ?? "/").startsWith("/api/")) return rest(req, res);
    plain(res, 404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

/** Sent with node:http: fetch will not send a Host of our choosing. */
function send(method: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; allow: string | undefined; body: unknown }>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        headers: { host: `127.0.0.1:${port}`, ...headers },
        agent: false,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (d: string) => {
          text += d;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body: text && JSON.parse(text) }),
        );
      },
    );
    req.on("error", reject).end();
  });
}

const message = { message: expect.any(String) };
const error = { error: expect.any(String) };

describe("under /api/, the guard's refusals are { message }", () => {
  it("a Host not served here: 421 (400 when malformed)", async () => {
    expect(await send("GET", "/api/stock/status", { host: "evil.example" })).toMatchObject({
      status: 421,
      body: { message: expect.stringMatching(/^host evil\.example is not served here/) },
    });
    expect(await send("GET", "/api/stock/status", { host: "a b" })).toMatchObject({
      status: 400,
      body: message,
    });
  });

  it("a POST from a foreign Origin: 403, and nothing runs", async () => {
    const res = await send("POST", "/api/stock/reset?productId=guard-x&stock=5", {
      origin: "http://evil.example",
    });
    expect(res).toMatchObject({
      status: 403,
      body: { message: expect.stringMatching(/^origin http:\/\/evil\.example not allowed/) },
    });
    expect((await t.caller.stock.get({ productId: "guard-x" })).qty).toBe(0);
  });

  it("a preflight from a foreign Origin: 403; from the dashboard's: 204", async () => {
    const foreign = await send("OPTIONS", "/api/stock/deduct", { origin: "http://evil.example" });
    expect(foreign).toMatchObject({ status: 403, body: message });
    expect(await send("OPTIONS", "/api/stock/deduct", { origin: DASHBOARD })).toMatchObject({ status: 204 });
  });

  it("PUT, DELETE, PATCH and TRACE reach rest.ts: a 405 with the route's own Allow", async () => {
    for (const method of ["PUT", "DELETE", "PATCH"]) {
      expect(await send(method, "/api/stock/deduct")).toEqual({ status: 405, allow: "POST", body: message });
    }
    expect(await send("TRACE", "/api/stock/status")).toEqual({
      status: 405,
      allow: "GET, HEAD",
      body: message,
    });
  });

  it("HEAD on a GET route is answered as GET, without a body", async () => {
    await t.caller.stock.reset({ productId: "guard-head", qty: 3 });
    expect(await send("HEAD", "/api/stock/status?productId=guard-head")).toEqual({
      status: 200,
      allow: undefined,
      body: "",
    });
  });
});

describe("elsewhere they stay { error }", () => {
  it("bad Host, foreign Origin, and a method outside GET, POST and OPTIONS", async () => {
    expect(await send("GET", "/trpc/stock.get", { host: "evil.example" })).toMatchObject({
      status: 421,
      body: error,
    });
    expect(await send("POST", "/trpc/stock.reset", { origin: "http://evil.example" })).toMatchObject({
      status: 403,
      body: error,
    });
    expect(await send("PUT", "/trpc/stock.get")).toEqual({
      status: 405,
      allow: "GET, POST, OPTIONS",
      body: error,
    });
  });
});
