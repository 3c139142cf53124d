// /healthz (liveness), /readyz (readiness) and request logs, on real API processes and a real Redis.

import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { freePort } from "../../../scripts/lib/ports.mjs";
// @ts-expect-error plain .mjs helper without types
import { startRedis } from "../../../scripts/lib/redis.mjs";
import { type ApiProcess, startApis, stopApis } from "./servers.js";

let redis: {
  url: string;
  stop(): Promise<void>;
  kill(sig?: string): Promise<void>;
  restart(): Promise<void>;
};
let plain: ApiProcess;
let strict: ApiProcess;

beforeAll(async () => {
  redis = await startRedis();
  // Nothing listens on this port: a configured PostgreSQL that is down.
  const deadPg = `postgres://postgres@127.0.0.1:${await freePort()}/lockyard`;
  const [plainApis, strictApis] = await Promise.all([
    startApis(redis.url, 1, { LOG_LEVEL: "info" }),
    startApis(redis.url, 1, {
      LOG_LEVEL: "info",
      REDLOCK_URLS: [redis.url, redis.url, redis.url].join(","),
      DATABASE_URL: deadPg,
      READY_REQUIRES: "redlock,postgres",
    }),
  ]);
  plain = plainApis[0]!;
  strict = strictApis[0]!;
}, 30_000);
afterAll(async () => {
  await stopApis([plain, strict].filter(Boolean));
  await redis?.stop();
});

const get = async (url: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
};
/** The API's JSON log lines. */
const logLines = (api: ApiProcess) =>
  api
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("health probes", () => {
  it("/healthz and /readyz answer 200 with Redis up; unconfigured stores are reported, not required", async () => {
    const live = await get(`${plain.url}/healthz`);
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ ok: true, instanceId: plain.instanceId });
    const ready = await get(`${plain.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      ok: true,
      checks: { redis: "up", redlock: "not configured", postgres: "not configured" },
      requires: ["redis"],
    });
  });

  it("/readyz is 503 while a required store is down, and says which without any error text", async () => {
    const ready = await get(`${strict.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({
      ok: false,
      checks: { redis: "up", redlock: "up", postgres: "down" },
      redlockNodesUp: "3/3",
      requires: ["redis", "redlock", "postgres"],
    });
    expect(JSON.stringify(ready.body)).not.toMatch(/ECONNREFUSED|Error|connect/i);
    expect((await get(`${strict.url}/healthz`)).status).toBe(200);
  });

  it("with Redis gone /readyz is 503 (redis down) while /healthz stays 200; both recover", async () => {
    await redis.kill("SIGKILL");
    try {
      const ready = await get(`${plain.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ ok: false, checks: { redis: "down" } });
      expect(JSON.stringify(ready.body)).not.toMatch(/ECONNREFUSED|Error|connect/i);
      expect((await get(`${plain.url}/healthz`)).status).toBe(200);
    } finally {
      await redis.restart();
    }
    const deadline = performance.now() + 10_000;
    let status = 0;
    while (performance.now() < deadline && status !== 200) {
      status = (await get(`${plain.url}/readyz`)).status;
      if (status !== 200) await sleep(100);
    }
    expect(status).toBe(200);
  }, 20_000);
});

describe("probe methods", () => {
  it("HEAD is GET without the body; other methods get 405 { message } with Allow: GET, HEAD", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      const head = await fetch(`${plain.url}${path}`, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-type")).toBe("application/json");
      expect(head.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await head.text()).toBe("");
      for (const method of ["POST", "PUT", "DELETE", "OPTIONS"]) {
        const res = await fetch(`${plain.url}${path}`, { method });
        expect({ method, status: res.status, allow: res.headers.get("allow") }).toEqual({
          method,
          status: 405,
          allow: "GET, HEAD",
        });
        expect(await res.json()).toEqual({ message: `${path} answers GET and HEAD only, not ${method}` });
      }
    }
  });
});

describe("requests Node's HTTP parser refuses, on a real instance", () => {
  /** The status line and body of what the instance answers to `request`, sent as written. */
  const raw = (request: string) =>
    new Promise<string>((resolve, reject) => {
      const { port } = new URL(plain.url);
      const socket = connect(Number(port), "127.0.0.1");
      let out = "";
      socket.setEncoding("utf8");
      socket.on("data", (d) => {
        out += d;
      });
      socket.on("error", reject);
      socket.on("close", () => resolve(out));
      socket.write(request);
    });

  it("answer 431, 400 and 417 with a JSON { message } and nosniff, not Node's empty body", async () => {
    const host = `Host: ${new URL(plain.url).host}\r\n`;
    const answers = [
      await raw(`GET /healthz HTTP/1.1\r\n${host}X-Big: ${"a".repeat(100_000)}\r\n\r\n`),
      await raw("HELLO\r\n\r\n"),
      await raw(`GET /healthz HTTP/1.1\r\n${host}Expect: something-else\r\nConnection: close\r\n\r\n`),
    ];
    expect(answers.map((a) => a.split(" ", 2)[1])).toEqual(["431", "400", "417"]);
    for (const a of answers) {
      expect(a.toLowerCase()).toContain("x-content-type-options: nosniff");
      expect(a).toMatch(/\{"message":"[^"]+/);
    }
  });
});

describe("request logs", () => {
  it("give each request an id, send it back as x-request-id and log one line with it", async () => {
    const given = await fetch(`${plain.url}/trpc/system.info`, { headers: { "x-request-id": "trace-42.a" } });
    expect(given.status).toBe(200);
    expect(given.headers.get("x-request-id")).toBe("trace-42.a");
    const fresh = await fetch(`${plain.url}/trpc/system.info`);
    const id = fresh.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // An id that is not short and plain is replaced, not echoed into logs and headers.
    const odd = await fetch(`${plain.url}/trpc/system.info`, { headers: { "x-request-id": "a b\tc" } });
    expect(odd.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

    await sleep(200);
    const lines = logLines(plain).filter((l) => l.reqId === "trace-42.a" || l.reqId === id);
    expect(lines).toHaveLength(2);
    for (const l of lines) {
      expect(l).toMatchObject({
        level: 30,
        req: { method: "GET", url: "/trpc/system.info" },
        res: { statusCode: 200 },
      });
      expect(JSON.stringify(l)).not.toMatch(/headers|x-admin-token|authorization/i);
    }
    // Probes are not logged.
    expect(logLines(plain).some((l) => String((l.req as { url?: string })?.url).startsWith("/healthz"))).toBe(
      false,
    );
  });
});
