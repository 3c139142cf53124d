// Scenario 8c: the admin token, owner ids, resource-name validation and CORS, against two real
// API processes started with ADMIN_TOKEN and one dashboard origin.
import { setTimeout as sleep } from "node:timers/promises";
import { createLocks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ApiProcess, startApis, stopApis, trpc } from "../src/apis.js";
import { figure } from "../src/figures.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";

const TOKEN = "s3cret-admin-token";
const DASHBOARD = "http://dash.example:3000";
let server: RedisServer;
let redis: Redis;
let apis: ApiProcess[];

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url);
  apis = await startApis(server.url, 2, {
    ADMIN_TOKEN: TOKEN,
    WEB_ORIGINS: DASHBOARD,
    JOB_INTERVAL_MS: "3600000",
    ORDER_PROCESSING_MS: "300",
    LOG_LEVEL: "fatal",
  });
});
afterAll(async () => {
  await stopApis(apis ?? []);
  redis?.disconnect();
  await server?.stop();
});

/** Commands Redis ran, from INFO commandstats, not counting INFO itself. */
async function commandsRun(): Promise<number> {
  const info = await redis.info("commandstats");
  let n = 0;
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (m[1] !== "info") n += Number(m[2]);
  return n;
}

it("admin procedures answer UNAUTHORIZED without the admin token, and change nothing", async () => {
  const url = apis[0]!.url;
  await redis.hset("stock:{sec-1}", "qty", 7);
  const tries = {
    none: await trpc(url, "stock.reset", { productId: "sec-1", qty: 1000 }),
    wrong: await trpc(
      url,
      "stock.reset",
      { productId: "sec-1", qty: 1000 },
      { headers: { "x-admin-token": "nope" } },
    ),
    prefix: await trpc(
      url,
      "stock.reset",
      { productId: "sec-1", qty: 1000 },
      { headers: { "x-admin-token": TOKEN.slice(0, -1) } },
    ),
    bearerWrong: await trpc(
      url,
      "stock.reset",
      { productId: "sec-1", qty: 1000 },
      { headers: { authorization: "Bearer nope" } },
    ),
  };
  const stockAfterRefusals = await redis.hget("stock:{sec-1}", "qty");
  const header = await trpc(
    apis[1]!.url,
    "stock.reset",
    { productId: "sec-1", qty: 8 },
    { headers: { "x-admin-token": TOKEN } },
  );
  const bearer = await trpc(
    url,
    "stock.reset",
    { productId: "sec-1", qty: 9 },
    { headers: { authorization: `Bearer ${TOKEN}` } },
  );
  const refused = Object.values(tries).filter((r) => r.status === 401 && r.code === "UNAUTHORIZED").length;
  figure(
    `admin token: ${refused}/${Object.keys(tries).length} admin calls without the right token → UNAUTHORIZED, stock untouched; with it → ${header.status}/${bearer.status}`,
  );
  expect(refused).toBe(4);
  expect(stockAfterRefusals).toBe("7");
  expect([header.status, bearer.status]).toEqual([200, 200]);
  expect(await redis.hget("stock:{sec-1}", "qty")).toBe("9");
});

it("an owner id is never taken from a client", async () => {
  const url = apis[0]!.url;
  // A client that saw a live owner id (e.g. on the dashboard) tries to use it.
  const order = trpc(url, "order.submit", { orderId: "sec-o1", productId: "sec-1", quantity: 1 });
  await sleep(100);
  const { data } = await trpc(url, "locks.list", { prefix: "order:submit:sec-o1" }, { method: "GET" });
  const live = (data as { locks: { owners: { owner: string }[] }[] }).locks[0]!.owners[0]!.owner;
  expect(live).toMatch(/^it-api-1:[0-9a-f]{32}$/);
  const attempts = [
    trpc(url, "order.submit", { orderId: "sec-o1", productId: "sec-1", quantity: 1, owner: live }),
    trpc(url, "order.submit", { orderId: "sec-o1", productId: "sec-1", quantity: 1, ownerId: live }),
    trpc(url, "stock.deduct", { productId: "sec-1", mode: "redis", owner: live }),
    trpc(
      url,
      "stock.deduct",
      { productId: "sec-1", mode: "redis" },
      { headers: { "x-lock-owner": live, "x-owner": live } },
    ),
  ];
  const results = await Promise.all(attempts);
  await order;
  expect(results.slice(0, 3).map((r) => r.code)).toEqual(["BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST"]);
  // The header is ignored: the deduct ran under a fresh owner of its own, after waiting its turn.
  const deduct = results[3]!.data as { ok: boolean; token: number | null };
  expect(deduct.ok).toBe(true);
  const left = await redis.keys("lock:*");
  figure(
    `owner ids: 3/3 requests carrying a live owner id rejected (BAD_REQUEST), owner headers ignored; ${left.length} locks left behind`,
  );
  expect(left.filter((k) => k.includes("sec-"))).toEqual([]);
});

it("resource names are validated before any Redis call", async () => {
  // Any 1-512 UTF-8 bytes without control characters is a name (braces, globs, spaces, non-ASCII included).
  const bad = ["", "a\nb", "a\u0000b", "tab\there", "\u007f", "x".repeat(513), "é".repeat(257), "\ud800"];
  const locks = createLocks({ redis, leaseMs: 500 });
  // The library: every method rejects, and Redis sees nothing. Then the API over HTTP.
  const before = await commandsRun();
  const lib = await Promise.all(
    bad.flatMap((r) => [
      locks.acquire(r).catch((e: Error) => e.name),
      locks.tryAcquire(r).catch((e: Error) => e.name),
      locks.withLock(r, () => "ran").catch((e: Error) => e.name),
    ]),
  );
  const api = await Promise.all(
    ["a{b}", "*", "1001}", "x?y", "[ab]", "x".repeat(65), "a b"].flatMap((id) => [
      trpc(apis[0]!.url, "stock.deduct", { productId: id, mode: "redis" }),
      trpc(apis[1]!.url, "order.submit", { orderId: id, productId: "sec-1", quantity: 1 }),
      trpc(apis[0]!.url, "stock.get", { productId: id }, { method: "GET" }),
    ]),
  );
  const after = await commandsRun();
  await locks.close();
  figure(
    `resource names: ${lib.filter((n) => n === "InvalidResourceError").length}/${lib.length} library calls and ${api.filter((r) => r.code === "BAD_REQUEST").length}/${api.length} API calls rejected, ${after - before} Redis commands run`,
  );
  expect(new Set(lib)).toEqual(new Set(["InvalidResourceError"]));
  expect(api.every((r) => r.status === 400 && r.code === "BAD_REQUEST")).toBe(true);
  expect(after - before).toBe(0);
});

it("CORS is limited to the dashboard's origin", async () => {
  const url = apis[1]!.url;
  const preflight = (origin: string) =>
    fetch(`${url}/trpc/stock.deduct`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
  const ok = await preflight(DASHBOARD);
  expect(ok.status).toBe(204);
  expect(ok.headers.get("access-control-allow-origin")).toBe(DASHBOARD);
  const others = [
    "http://evil.example",
    "http://localhost:3000",
    "null",
    "http://dash.example:3001",
    "https://dash.example:3000",
    `${DASHBOARD}.evil.example`,
  ];
  let refused = 0;
  for (const origin of others) {
    const pre = await preflight(origin);
    const get = await fetch(`${url}/trpc/system.info`, { headers: { origin } });
    if (
      pre.status === 403 &&
      pre.headers.get("access-control-allow-origin") === null &&
      get.headers.get("access-control-allow-origin") === null
    )
      refused++;
    expect(get.headers.get("access-control-allow-origin")).not.toBe("*");
  }
  const simple = await fetch(`${url}/trpc/system.info`, { headers: { origin: DASHBOARD } });
  figure(
    `cors: the dashboard origin allowed; ${refused}/${others.length} other origins refused (no allow-origin header, preflight 403)`,
  );
  expect(simple.headers.get("access-control-allow-origin")).toBe(DASHBOARD);
  expect(refused).toBe(others.length);
});
