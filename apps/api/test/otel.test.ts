// The API's OpenTelemetry wiring on a real API process and the suite's Redis: with OTEL_EXPORTER_OTLP_ENDPOINT
// set, the locks' spans and metrics reach a collector (a stand-in here), and /metrics still answers as before.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { burst } from "./burst-run.js";
import { startCollector } from "./otel-collector.js";
import { type ApiProcess, startApis, stopApis } from "./servers.js";

let collector: Awaited<ReturnType<typeof startCollector>>;
let api: ApiProcess | undefined;
beforeAll(async () => {
  collector = await startCollector();
}, 30_000);
afterAll(async () => {
  await stopApis(api ? [api] : []);
  await collector.close();
});

describe("OpenTelemetry", () => {
  it("exports spans and metrics of the API's locks over OTLP, and /metrics keeps working", async () => {
    const [started] = await startApis(inject("redisUrl"), 1, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/`,
      OTEL_METRIC_EXPORT_INTERVAL: "200",
    });
    api = started!;
    const product = `demo-otel-${process.pid}`;
    const { url, instanceId } = api;
    const post = (path: string) => fetch(`${url}${path}`, { method: "POST" });
    expect((await post(`/api/stock/reset?productId=${product}&stock=10`)).status).toBe(200);
    // Concurrent deductions on one product: all but the first wait for its lock.
    const deducts = await Promise.all(
      Array.from({ length: 4 }, () => post(`/api/stock/deduct?productId=${product}&workMs=30`)),
    );
    expect(deducts.map((r) => r.status)).toEqual([200, 200, 200, 200]);

    const scrape = await fetch(`${url}/metrics`);
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toMatch(
      /lockyard_lock_acquisitions_total\{resource_kind="stock",backend="redis"\} [4-9]/,
    );
    await new Promise((r) => setTimeout(r, 400)); // one metric export interval and more
    expect(collector.metricNames).toContain("lock.wait.duration");
    expect(collector.metricNames).toContain("lock.hold.duration");

    await stopApis([api]); // shutdown flushes the spans still batched
    api = undefined;
    expect([...collector.contentTypes]).toEqual(["application/json"]);
    const mine = collector.spans.filter((s) => s.attributes["lock.resource"] === product);
    const acquires = mine.filter((s) => s.name === "lock.acquire");
    const holds = mine.filter((s) => s.name === "lock.hold");
    expect(acquires).toHaveLength(4);
    expect(holds).toHaveLength(4);
    for (const s of [...acquires, ...holds]) {
      expect(s.resource["service.name"]).toBe("lockyard-api");
      expect(s.resource["service.instance.id"]).toBe(instanceId);
      expect(s.attributes["lock.backend"]).toBe("redis");
      expect(s.attributes["lock.resource_kind"]).toBe("stock");
    }
    expect(acquires.every((s) => s.attributes["lock.outcome"] === "acquired")).toBe(true);
    expect(acquires.filter((s) => s.events.some((e) => e.name === "contended")).length).toBeGreaterThan(0);
    expect(holds.every((s) => s.events.at(-1)?.attributes["lock.release_result"] === "released")).toBe(true);
  });

  it("runs each request in a server span that continues the caller's trace, the lock's spans inside it", async () => {
    collector.spans.length = 0; // the first test's API has stopped: what comes now is this one's
    const [started] = await startApis(inject("redisUrl"), 1, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/`,
    });
    api = started!;
    const product = `demo-otel-trace-${process.pid}`;
    const { url } = api;
    const callerTrace = randomBytes(16).toString("hex");
    const callerSpan = randomBytes(8).toString("hex");
    const traceparent = `00-${callerTrace}-${callerSpan}-01`;
    const post = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${url}${path}`, { method: "POST", headers });
    expect((await post(`/api/stock/reset?productId=${product}&stock=5`)).status).toBe(200);
    const deducted = await Promise.all([
      post(`/api/stock/deduct?productId=${product}&workMs=30`, { traceparent }),
      post(`/api/stock/deduct?productId=${product}&workMs=30`),
    ]);
    expect(deducted.map((r) => r.status)).toEqual([200, 200]);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/no-such-page-${process.pid}`)).status).toBe(404);
    await stopApis([api]);
    api = undefined;

    const servers = collector.spans.filter((s) => s.kind === 2);
    const deducts = servers.filter((s) => s.name === "POST /api/stock/deduct");
    expect(deducts).toHaveLength(2);
    const continued = deducts.find((s) => s.traceId === callerTrace);
    expect(continued?.parentSpanId).toBe(callerSpan);
    expect(continued?.attributes["http.request.method"]).toBe("POST");
    expect(continued?.attributes["http.response.status_code"]).toBe(200);
    // The other request started a trace of its own.
    const fresh = deducts.find((s) => s !== continued)!;
    expect(fresh.traceId).not.toBe(callerTrace);
    expect(fresh.parentSpanId).toBe("");
    // Each request's lock.acquire and lock.hold are children of its server span.
    for (const request of deducts) {
      const children = collector.spans.filter(
        (s) => s.parentSpanId === request.spanId && s.attributes["lock.resource"] === product,
      );
      expect(children.map((s) => s.name).sort()).toEqual(["lock.acquire", "lock.hold"]);
      expect(children.every((s) => s.traceId === request.traceId)).toBe(true);
    }
    // Probes are not traced; a path nobody serves is named by its method alone.
    expect(servers.some((s) => s.attributes["url.path"] === "/healthz")).toBe(false);
    const missing = servers.find((s) => s.attributes["url.path"] === `/no-such-page-${process.pid}`);
    expect(missing?.name).toBe("GET");
    expect(missing?.attributes["http.response.status_code"]).toBe(404);
  });

  it("traces a whole burst as one trace: the burst's span, every request's server span and their lock spans", async () => {
    collector.spans.length = 0;
    const [started] = await startApis(inject("redisUrl"), 1, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/`,
    });
    api = started!;
    const product = `demo-otel-burst-${process.pid}`;
    const requests = 12;
    const { report } = await burst(api.url, {
      productId: product,
      mode: "redis",
      requests,
      initialStock: 5,
      workMs: 5,
    });
    expect(report.successes).toBe(5);
    expect(report.traceId).toMatch(/^[0-9a-f]{32}$/);
    await stopApis([api]);
    api = undefined;

    const inTrace = collector.spans.filter((s) => s.traceId === report.traceId);
    const span = inTrace.find((s) => s.name === "demo.burst");
    expect(span?.attributes["lockyard.burst.mode"]).toBe("redis");
    expect(span?.attributes["lockyard.burst.successes"]).toBe(5);
    expect(span?.attributes["lockyard.burst.oversold"]).toBe(0);
    // A child of the request that started it.
    const start = inTrace.find((s) => s.kind === 2 && s.name === "POST /trpc/demo.burst.start");
    expect(span?.parentSpanId).toBe(start?.spanId);
    // Every request of the burst continues its trace, and each one's lock spans are inside it.
    const deducts = inTrace.filter((s) => s.kind === 2 && s.name === "POST /trpc/stock.deduct");
    expect(deducts).toHaveLength(requests);
    expect(deducts.every((s) => s.parentSpanId === span?.spanId)).toBe(true);
    const acquires = inTrace.filter(
      (s) => s.name === "lock.acquire" && s.attributes["lock.resource"] === product,
    );
    expect(acquires).toHaveLength(requests);
    const deductIds = new Set(deducts.map((s) => s.spanId));
    expect(acquires.every((s) => deductIds.has(s.parentSpanId))).toBe(true);
  });
});
