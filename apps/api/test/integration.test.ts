import { createLocks } from "@lockyard/lock";
import { TRPCClientError } from "@trpc/client";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { startRedis } from "../../../scripts/lib/redis.mjs";
import { createApiClient } from "../src/client.js";
import type { AppRouter } from "../src/index.js";
import { burst } from "./burst-run.js";
import { type ApiProcess, startApis, stopApis } from "./servers.js";

let apis: ApiProcess[];
let redis: Redis;
let redlockNodes: { url: string; stop(): Promise<void> }[] = [];
const client = (url: string) => createApiClient<AppRouter>(url);

beforeAll(async () => {
  redis = new Redis(inject("redisUrl"));
  await redis.del("jobs:cleanup:runs");
  // Three independent Redis nodes for the redlock mode, and the suite's PostgreSQL for the postgres mode.
  redlockNodes = await Promise.all([startRedis(), startRedis(), startRedis()]);
  apis = await startApis(inject("redisUrl"), 2, {
    JOB_INTERVAL_MS: "400",
    ORDER_PROCESSING_MS: "150",
    REDLOCK_URLS: redlockNodes.map((n) => n.url).join(","),
    DATABASE_URL: inject("pgUrl"),
  });
}, 30_000);
afterAll(async () => {
  await stopApis(apis ?? []);
  await Promise.all(redlockNodes.map((n) => n.stop()));
  redis?.disconnect();
});

describe("two API instances on one Redis", () => {
  it("both instances report every mode available", async () => {
    for (const api of apis) {
      const info = await client(api.url).system.info.query();
      expect(info.modes.filter((m) => !m.available)).toEqual([]);
      expect(info.postgres.available).toBe(true);
    }
  });

  it.each([
    ["redis", 10],
    ["redlock", 10],
    ["postgres", 10],
    ["atomic", 10],
  ] as const)("%s mode: a 200-request burst sells exactly the stock", async (mode, workMs) => {
    const { events, report } = await burst(apis[0]!.url, { productId: `demo-it-${mode}`, mode, workMs });
    expect(report).toMatchObject({ mode, requests: 200, initialStock: 100, successes: 100, soldOut: 100 });
    expect(report.errors).toBe(0);
    expect(report.finalStock).toBe(0);
    expect(report.lowestStock).toBeGreaterThanOrEqual(0);
    expect(report.oversold).toBe(0);
    // Both instances served requests.
    expect(Object.keys(report.perInstance).sort()).toEqual(apis.map((a) => a.instanceId).sort());
    expect(events.some((e) => e.type === "progress")).toBe(true);
    expect(report.redisCommandsPerSuccess).toBeGreaterThan(0);
  });

  it.each(["none", "local"] as const)("%s mode oversells across two instances", async (mode) => {
    const { report } = await burst(apis[1]!.url, { productId: `demo-it-${mode}`, mode, workMs: 100 });
    expect(report.oversold).toBeGreaterThan(0);
    expect(report.finalStock).toBeLessThan(0);
    expect(report.lowestStock).toBeLessThan(0);
    expect(report.successes).toBe(100 + report.oversold);
  });

  it("refuses a second concurrent burst with CONFLICT naming the running run, and bad sizes with 400", async () => {
    const running = await client(apis[0]!.url).demo.burst.start.mutate({
      productId: "demo-it-busy",
      mode: "atomic",
      workMs: 1000,
      requests: 50,
    });
    const err = await burst(apis[1]!.url, { productId: "demo-it-busy2", mode: "atomic" }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TRPCClientError);
    const data = (err as TRPCClientError<AppRouter>).data as { code?: string; runId?: string };
    expect(data.code).toBe("CONFLICT");
    expect(data.runId).toBe(running.runId);
    for (const requests of [0, 1001]) {
      const e = await burst(apis[0]!.url, { productId: "demo-it-x", mode: "atomic", requests }).catch(
        (x: unknown) => x,
      );
      expect((e as TRPCClientError<AppRouter>).data?.code).toBe("BAD_REQUEST");
    }
    // Wait for the first burst to end (it holds the guard until every request settled).
    for (;;) {
      const again = await client(apis[0]!.url)
        .demo.burst.start.mutate({ productId: "demo-it-busy", mode: "atomic", requests: 1, workMs: 0 })
        .catch((e: unknown) => e);
      if (!(again instanceof TRPCClientError)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  it("20 concurrent submissions of one order over both instances create it exactly once", async () => {
    const orderId = `it-order-${Date.now()}`;
    const settled = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        client(apis[i % 2]!.url).order.submit.mutate({ orderId, productId: "1001", quantity: 1 }),
      ),
    );
    const created = settled.filter((s) => s.status === "fulfilled" && !s.value.replayed);
    const replayed = settled.filter((s) => s.status === "fulfilled" && s.value.replayed);
    const conflicts = settled.filter(
      (s) => s.status === "rejected" && (s.reason as TRPCClientError<AppRouter>).data?.code === "CONFLICT",
    );
    expect(created).toHaveLength(1);
    expect(created.length + replayed.length + conflicts.length).toBe(20);
    const stored = await client(apis[1]!.url).order.get.query({ orderId });
    expect(stored?.orderId).toBe(orderId);
  });

  it("the cleanup job runs exactly once per tick across the instances", async () => {
    await new Promise((r) => setTimeout(r, 400 * 6));
    const { runs } = await client(apis[0]!.url).jobs.runs.query({ limit: 100 });
    const ticks = runs.map((r) => r.tick);
    expect(ticks.length).toBeGreaterThanOrEqual(4);
    expect(new Set(ticks).size).toBe(ticks.length);
    for (const r of runs) expect(apis.map((a) => a.instanceId)).toContain(r.instanceId);
  });

  it("answers bad input over HTTP with 400 and zod details, never 500", async () => {
    const url = apis[0]!.url;
    const post = (path: string, body: string) =>
      fetch(`${url}/trpc/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const cases: [string, string][] = [
      ["stock.deduct", JSON.stringify({ productId: "1001", mode: "redis", quantity: -5 })],
      ["stock.deduct", JSON.stringify({ productId: "a{b}", mode: "redis" })],
      ["stock.deduct", JSON.stringify({ productId: "1001", mode: "redis", owner: "me" })],
      ["stock.deduct", "{not json"],
      ["order.submit", JSON.stringify({ orderId: "x".repeat(65), productId: "1", quantity: 1 })],
    ];
    for (const [path, body] of cases) {
      const res = await post(path, body);
      expect(res.status).toBe(400);
      const json = (await res.json()) as { error: { data: { code: string; stack?: string } } };
      expect(json.error.data.code).toBe("BAD_REQUEST");
      expect(json.error.data.stack).toBeUndefined();
    }
    const zod = (await (await post("stock.deduct", JSON.stringify({ productId: "", mode: "x" }))).json()) as {
      error: { data: { zodError: { fieldErrors: Record<string, string[]> } } };
    };
    expect(Object.keys(zod.error.data.zodError.fieldErrors).sort()).toEqual(["mode", "productId"]);
    const huge = await post("stock.deduct", JSON.stringify({ productId: "x".repeat(200_000), mode: "none" }));
    expect(huge.status).toBe(413);
    const get = await fetch(`${url}/trpc/stock.get?input=${encodeURIComponent("{")}`);
    expect(get.status).toBe(400);
  });

  it("serves /healthz, /metrics and CORS for the dashboard origin only", async () => {
    const url = apis[1]!.url;
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, instanceId: apis[1]!.instanceId });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/lockyard_lock_acquisitions_total/);
    for (const backend of ["redis", "redlock", "postgres"])
      expect(metrics).toMatch(new RegExp(`lockyard_lock_acquisitions_total\\{[^}]*backend="${backend}"`));
    // The bursts above ran on the first instance, which counts their results per mode.
    const first = await (await fetch(`${apis[0]!.url}/metrics`)).text();
    for (const mode of ["redlock", "postgres"])
      expect(first).toMatch(
        new RegExp(`lockyard_burst_requests_total\\{mode="${mode}",outcome="success"\\} 100`),
      );
    expect(metrics).toMatch(/lockyard_burst_requests_total\{mode="(redis|atomic|none|local)"/);
    const pre = await fetch(`${url}/trpc/stock.deduct`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:3000", "access-control-request-method": "POST" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
    const evil = await fetch(`${url}/trpc/system.info`, { headers: { origin: "http://evil.example" } });
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
    const info = await client(url).system.info.query();
    expect(info.instanceId).toBe(apis[1]!.instanceId);
    expect(info.config.apiUrls).toEqual(apis.map((a) => a.url));
  });

  it("locks.watch streams a snapshot over SSE, then a delta when a lock is taken", async () => {
    const resource = `sse:${Date.now()}`;
    const locks = createLocks({ redis, instanceId: "sse-test" });
    const kinds = await new Promise<string[]>((resolve, reject) => {
      const seen: string[] = [];
      const sub = client(apis[0]!.url).locks.watch.subscribe(
        { prefix: resource, intervalMs: 50 },
        {
          onData(e) {
            seen.push(e.kind);
            if (e.kind === "snapshot") {
              expect(e.instanceId).toBe(apis[0]!.instanceId);
              void locks.acquire(resource, { leaseMs: 2_000 }).catch(reject);
            }
            if (e.kind === "delta" && e.added.some((l) => l.resource === resource)) {
              sub.unsubscribe();
              resolve(seen);
            }
          },
          onError: reject,
        },
      );
    });
    await locks.close();
    expect(kinds).toEqual(["snapshot", "delta"]);
  });
});
