// Scenario 9: a hostile client, black-box over HTTP against two real API instances started with an admin
// token (issue 18). Every check here failed on the API before the fix.

import { connect, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiProcess, startApis, stopApis, trpc } from "../src/apis.js";
import { figure } from "../src/figures.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";

const TOKEN = "hostile-admin-token";
const DASHBOARD = "http://localhost:3000";
const EVIL = "http://evil.example";
const REQUEST_TIMEOUT_MS = 1_000;
const MAX_STREAMS = 5;
const MAX_CONNECTIONS = 40;
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
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    HEADERS_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    MAX_STREAMS_PER_CLIENT: String(MAX_STREAMS),
    MAX_CONNECTIONS_PER_CLIENT: String(MAX_CONNECTIONS),
    LOG_LEVEL: "fatal",
  });
  await redis.hset("stock:{X}", "qty", 777);
  await redis.hset("stock:{demo-hostile}", "qty", 50);
});
afterAll(async () => {
  await stopApis(apis ?? []);
  redis?.disconnect();
  await server?.stop();
});

const admin = { "x-admin-token": TOKEN };
const q = (input: unknown) => `?input=${encodeURIComponent(JSON.stringify(input))}`;

/** A raw HTTP/1.1 exchange: what the server answered (status line), or "closed" when it hung up first. */
function raw(port: number, request: string, waitMs = 5_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let data = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(data.split("\r\n")[0] || "no answer");
    }, waitMs);
    socket.on("data", (d) => {
      data += d;
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(data.split("\r\n")[0] || "closed");
    });
    socket.on("error", () => undefined);
    socket.write(request);
  });
}

const portOf = (url: string) => Number(new URL(url).port);

describe("security", () => {
  it("no GET changes state: a foreign page cannot start a burst or reset stock with a link", async () => {
    const url = apis[0]!.url;
    const input = { productId: "X", mode: "none", requests: 50, initialStock: 5, workMs: 20 };
    const tries = await Promise.all([
      fetch(`${url}/trpc/demo.burst.start${q(input)}`, { headers: { origin: EVIL } }),
      fetch(`${url}/trpc/demo.burst${q(input)}`, { headers: { origin: EVIL } }),
      fetch(`${url}/trpc/stock.reset${q({ productId: "X", qty: 1 })}`, { headers: { origin: EVIL } }),
      fetch(`${url}/trpc/stock.deduct${q({ productId: "X", mode: "none" })}`, { headers: { origin: EVIL } }),
      fetch(`${url}/trpc/demo.scenario.start${q({ name: "crash" })}`, { headers: { origin: EVIL } }),
    ]);
    // A simple cross-origin POST (no preflight) is refused too, whatever its content type.
    const post = await fetch(`${url}/trpc/stock.deduct`, {
      method: "POST",
      headers: { origin: EVIL, "content-type": "text/plain" },
      body: JSON.stringify({ productId: "X", mode: "none" }),
    });
    await sleep(300);
    figure(
      `hostile: ${tries.filter((r) => r.status >= 400).length}/${tries.length} state-changing GETs refused, foreign POST ${post.status}`,
    );
    expect(tries.every((r) => r.status >= 400)).toBe(true);
    expect(post.status).toBe(403);
    // The API's own origin (its docs page's "Try it out") may post; an origin on another port may not.
    const self = new URL(url);
    const own = await fetch(`${url}/trpc/stock.get`, { method: "POST", headers: { origin: self.origin } });
    expect(own.status).not.toBe(403);
    const otherPort = await fetch(`${url}/trpc/stock.deduct`, {
      method: "POST",
      headers: { origin: `http://${self.hostname}:1`, "content-type": "text/plain" },
      body: JSON.stringify({ productId: "X", mode: "none" }),
    });
    expect(otherPort.status).toBe(403);
    expect(await redis.hget("stock:{X}", "qty")).toBe("777");
    expect(await redis.keys("demo:run:*")).toEqual([]);
  });

  it("demo runs only touch demo products, and need the admin token", async () => {
    const url = apis[1]!.url;
    const noToken = await trpc(url, "demo.burst.start", { productId: "demo-hostile", mode: "none" });
    const notDemo = await trpc(url, "demo.burst.start", { productId: "X", mode: "none" }, { headers: admin });
    expect(noToken.code).toBe("UNAUTHORIZED");
    expect(notDemo.code).toBe("FORBIDDEN");
    expect(await redis.hget("stock:{X}", "qty")).toBe("777");
    expect(await redis.hget("stock:{demo-hostile}", "qty")).toBe("50");
  });

  it("DNS rebinding: only configured hosts are served (421), malformed ones get 400", async () => {
    const port = portOf(apis[0]!.url);
    const reset = (host: string) =>
      raw(
        port,
        `POST /trpc/stock.reset HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\nx-admin-token: ${TOKEN}\r\n` +
          `content-type: application/json\r\ncontent-length: 32\r\nconnection: close\r\n\r\n{"productId":"X","qty":1000000}`,
      );
    const rebound = await reset(`rebind.evil.example:${port}`);
    const malformed = await raw(
      port,
      "GET /healthz HTTP/1.1\r\nHost: user:pw@evil\r\nconnection: close\r\n\r\n",
    );
    const good = await raw(
      port,
      `GET /healthz HTTP/1.1\r\nHost: localhost:${port}\r\nconnection: close\r\n\r\n`,
    );
    figure(`hostile: rebinding Host → ${rebound}; malformed Host → ${malformed}; localhost → ${good}`);
    expect(rebound).toMatch(/ 421 /);
    expect(malformed).toMatch(/ 400 /);
    expect(good).toMatch(/ 200 /);
    expect(await redis.hget("stock:{X}", "qty")).toBe("777");
  });

  it("scenarios are limited: 20 concurrent starts run at most 2", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        trpc(apis[i % 2]!.url, "demo.scenario.start", { name: "crash", timeScale: 0.25 }, { headers: admin }),
      ),
    );
    const started = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.code === "TOO_MANY_REQUESTS").length;
    figure(`hostile: 20 concurrent scenario starts → ${started} started, ${refused} TOO_MANY_REQUESTS`);
    expect(started).toBe(1); // one client address: MAX_SCENARIOS_PER_CLIENT (1)
    expect(refused).toBe(19);
  });

  it("system.info and /metrics keep details behind the admin token", async () => {
    const url = apis[0]!.url;
    const info = await trpc(url, "system.info", undefined, { method: "GET" });
    expect(info.data).toMatchObject({ detailed: false, node: null, redis: { version: null } });
    expect(JSON.stringify(info.data)).not.toMatch(/127\.0\.0\.1|v\d+\.\d+/);
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.status).toBe(401);
    const adminInfo = await trpc(url, "system.info", undefined, { method: "GET", headers: admin });
    expect(adminInfo.data).toMatchObject({ detailed: true });
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(
      200,
    );
  });

  it("sends nosniff and a Vary that includes Origin on tRPC answers", async () => {
    const res = await fetch(`${apis[1]!.url}/trpc/system.info`, { headers: { origin: DASHBOARD } });
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("vary")?.toLowerCase()).toMatch(/\borigin\b/);
    expect(res.headers.get("access-control-allow-origin")).toBe(DASHBOARD);
  });
});

describe("denial of service", () => {
  it("a 500-call batch is refused before any call runs", async () => {
    const paths = Array.from({ length: 500 }, () => "system.info").join(",");
    const res = await fetch(`${apis[0]!.url}/trpc/${paths}?batch=1`);
    const infoCalls = Number(/cmdstat_info:calls=(\d+)/.exec(await redis.info("commandstats"))?.[1] ?? 0);
    figure(`hostile: 500-call batch → ${res.status}`);
    expect(res.status).toBe(400);
    expect(infoCalls).toBeLessThan(50);
  });

  it("a stalled body is cut off after REQUEST_TIMEOUT_MS; an SSE stream outlives it", async () => {
    const port = portOf(apis[1]!.url);
    const stalled = await raw(
      port,
      `POST /trpc/stock.deduct HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n`,
      REQUEST_TIMEOUT_MS * 10,
    );
    expect(stalled).not.toBe("no answer");
    // A subscription keeps streaming past the request timeout (its request was complete at once).
    const ctl = new AbortController();
    const res = await fetch(`${apis[1]!.url}/trpc/locks.watch`, { signal: ctl.signal });
    const reader = res.body!.getReader();
    const started = performance.now();
    let alive = false;
    while (!alive) {
      const { done } = await reader.read();
      if (done) break;
      alive = performance.now() - started > REQUEST_TIMEOUT_MS * 3;
    }
    ctl.abort();
    figure(
      `hostile: stalled body → ${stalled}; an SSE stream stayed open ${alive ? "past" : "NOT past"} the request timeout`,
    );
    expect(alive).toBe(true);
  });

  it(`caps SSE streams (${MAX_STREAMS}) and connections (${MAX_CONNECTIONS}) per client address`, async () => {
    const url = apis[0]!.url;
    const ctls = Array.from({ length: MAX_STREAMS + 3 }, () => new AbortController());
    const streams = await Promise.all(
      ctls.map((c) => fetch(`${url}/trpc/locks.watch`, { signal: c.signal })),
    );
    const statuses = streams.map((r) => r.status);
    for (const c of ctls) c.abort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(MAX_STREAMS);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    // Idle connections that never send a byte.
    const port = portOf(apis[1]!.url);
    const sockets: Socket[] = [];
    let closedByServer = 0;
    await Promise.all(
      Array.from(
        { length: MAX_CONNECTIONS + 10 },
        () =>
          new Promise<void>((resolve) => {
            const s = connect(port, "127.0.0.1", () => resolve());
            s.on("close", () => closedByServer++);
            s.on("error", () => resolve());
            sockets.push(s);
          }),
      ),
    );
    await sleep(300);
    const closedEarly = closedByServer;
    for (const s of sockets) s.destroy();
    figure(
      `hostile: ${statuses.filter((s) => s === 429).length} streams over the cap → 429; ${closedEarly} connections over the cap closed`,
    );
    expect(closedEarly).toBeGreaterThanOrEqual(10);
  });

  it("a client cannot make a product wait: workMs is capped and queued work per product is bounded", async () => {
    const url = apis[0]!.url;
    const big = await trpc(url, "stock.deduct", { productId: "demo-hostile", mode: "redis", workMs: 5000 });
    expect(big.code).toBe("BAD_REQUEST");
    const unknown = await trpc(url, "stock.deduct", { productId: "never-created", mode: "redis" });
    expect(unknown.code).toBe("NOT_FOUND");
    // A product is locked by its bare id (lock:{id}, fence:{id}): an unknown one never got as far as a lock.
    expect(await redis.exists("fence:{never-created}")).toBe(0);
  });
});

describe("small ones", () => {
  it("TRACE → 405, system.info?input={ → 400, requests: 0 → 400, a POST to /healthz → 405 unread", async () => {
    const url = apis[1]!.url;
    const port = portOf(url);
    const traceRaw = await raw(
      port,
      `TRACE /trpc/system.info HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nconnection: close\r\n\r\n`,
    );
    const info = await fetch(`${url}/trpc/system.info?input=${encodeURIComponent("{")}`);
    const zero = await trpc(url, "demo.burst.start", { mode: "atomic", requests: 0 }, { headers: admin });
    const health = await raw(
      port,
      `POST /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-length: 104857600\r\n\r\n${"x".repeat(1024)}`,
    );
    figure(
      `hostile: TRACE → ${traceRaw}; system.info?input={ → ${info.status}; requests 0 → ${zero.status}; POST /healthz → ${health}`,
    );
    expect(traceRaw).toMatch(/ 405 /);
    expect(info.status).toBe(400);
    expect(zero.code).toBe("BAD_REQUEST");
    expect(health).toMatch(/ 405 /);
  });
});
