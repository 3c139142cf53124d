// Demo runs through two real API processes: starting is a mutation, watching a tracked subscription that
// resumes without re-running anything, and the unsafe modes oversell every time while the safe ones never do.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { startRedis } from "../../../scripts/lib/redis.mjs";
import { createApiClient } from "../src/client.js";
import type { AppRouter, RouterInputs } from "../src/index.js";
import type { BurstReport, RunEvent } from "../src/types.js";
import { type ApiProcess, startApis, stopApis } from "./servers.js";

/** Bursts per mode: the "20 of 20" for the unsafe modes. */
const UNSAFE_RUNS = 20;
/** The safe modes end at exactly 0 every time; fewer runs keep the file's time reasonable. */
const SAFE_RUNS = 5;

let apis: ApiProcess[];
let redis: Redis;
let redlockNodes: { url: string; stop(): Promise<void> }[] = [];
const client = (url: string) => createApiClient<AppRouter>(url);

beforeAll(async () => {
  redis = new Redis(inject("redisUrl"));
  redlockNodes = await Promise.all([startRedis(), startRedis(), startRedis()]);
  apis = await startApis(inject("redisUrl"), 2, {
    JOB_INTERVAL_MS: "3600000",
    REDLOCK_URLS: redlockNodes.map((n) => n.url).join(","),
    DATABASE_URL: inject("pgUrl"),
  });
}, 30_000);
afterAll(async () => {
  await stopApis(apis ?? []);
  await Promise.all(redlockNodes.map((n) => n.stop()));
  redis?.disconnect();
});

/** Reads a run's SSE stream over plain HTTP: the tracked ids and events, until `stopAfter` events or the end. */
async function readRun(
  url: string,
  runId: string,
  opts: { lastEventId?: string; stopAfter?: number } = {},
): Promise<{ id: string; event: RunEvent }[]> {
  const input = encodeURIComponent(
    JSON.stringify({ runId, ...(opts.lastEventId ? { lastEventId: opts.lastEventId } : {}) }),
  );
  const ctl = new AbortController();
  const res = await fetch(`${url}/trpc/demo.runs.watch?input=${input}`, { signal: ctl.signal });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  const out: { id: string; event: RunEvent }[] = [];
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return out;
      buf += dec.decode(value, { stream: true });
      for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const id = /^id: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (/^event: /m.test(block) || id === undefined || data === undefined) continue;
        const event = JSON.parse(data) as RunEvent;
        out.push({ id, event });
        const end = event.type === "report" || event.type === "done" || event.type === "failed";
        if (end || out.length === opts.stopAfter) return out;
      }
    }
  } finally {
    ctl.abort();
  }
}

async function burst(url: string, input: RouterInputs["demo"]["burst"]["start"]): Promise<BurstReport> {
  const { runId } = await client(url).demo.burst.start.mutate(input);
  const events = await readRun(url, runId);
  const last = events.at(-1)?.event;
  if (last?.type !== "report") throw new Error(`burst ended with ${JSON.stringify(last)}`);
  return last;
}

describe("demo runs", () => {
  it("a watcher that reconnects resumes from its last event id, and no second burst starts", async () => {
    const productId = "demo-runs-resume";
    const url = apis[0]!.url;
    const { runId } = await client(url).demo.burst.start.mutate({ productId, mode: "redis", workMs: 20 });
    const first = await readRun(url, runId, { stopAfter: 3 });
    expect(first.map((e) => e.id)).toEqual(["0", "1", "2"]);
    // Reconnect to the *other* instance, as EventSource would with Last-Event-ID (tRPC's lastEventId input).
    const rest = await readRun(apis[1]!.url, runId, { lastEventId: "2" });
    const ids = [...first, ...rest].map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => i));
    const report = rest.at(-1)!.event as BurstReport;
    expect(report).toMatchObject({ type: "report", successes: 100, finalStock: 0, oversold: 0 });
    // The stock was reset once: 200 requests, 100 sold, and every request accounted for.
    expect(report.successes + report.soldOut + report.errors).toBe(200);
    // A finished run replays from Redis on either instance, identically.
    const replay = await readRun(apis[1]!.url, runId);
    expect(replay.map((e) => e.id)).toEqual(ids.map(String));
    expect(replay.at(-1)!.event).toEqual(report);
    // Reconnecting never starts anything: only this one run exists for the product's runs so far.
    const runs = await redis.keys("demo:run:{*}");
    expect(runs.filter((k) => !k.endsWith(":events")).length).toBeGreaterThanOrEqual(1);
    expect(await redis.ttl(`demo:run:{${runId}}:events`)).toBeGreaterThan(0);
  });

  it("a cancelled burst holds the guard until its requests settled; a safe burst after it ends at exactly 0", async () => {
    const productId = "demo-runs-abandoned";
    const [a, b] = [apis[0]!.url, apis[1]!.url];
    const first = await client(a).demo.burst.start.mutate({
      productId,
      mode: "none",
      requests: 400,
      workMs: 1000,
    });
    // The watcher leaves at once: the run goes on, and still holds the guard.
    await readRun(a, first.runId, { stopAfter: 1 });
    const busy = await client(b)
      .demo.burst.start.mutate({ productId, mode: "redis" })
      .catch((e: unknown) => e as { data?: { code?: string; runId?: string } });
    expect(busy).toMatchObject({ data: { code: "CONFLICT", runId: first.runId } });
    // Cancelled from the other instance: its outstanding requests are aborted.
    expect(await client(b).demo.runs.cancel.mutate({ runId: first.runId })).toEqual({ cancelled: true });
    let second: { runId: string } | undefined;
    while (!second) {
      second = await client(b)
        .demo.burst.start.mutate({ productId, mode: "redis" })
        .catch(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), 200)));
    }
    const firstEnd = (await readRun(a, first.runId)).at(-1)?.event;
    expect(firstEnd).toMatchObject({ type: "failed" });
    const report = (await readRun(b, second.runId)).at(-1)?.event as BurstReport;
    expect(report).toMatchObject({ type: "report", successes: 100, finalStock: 0, oversold: 0, errors: 0 });
    expect(report.lowestStock).toBeGreaterThanOrEqual(0);
  }, 60_000);

  it("safe modes mixed on one product never oversell: every write refuses to go below zero", async () => {
    const productId = "demo-runs-mixed";
    await client(apis[0]!.url).stock.reset.mutate({ productId, qty: 10 });
    const modes = ["redis", "atomic", "postgres", "redlock"] as const;
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        client(apis[i % 2]!.url).stock.deduct.mutate({ productId, mode: modes[i % 4]!, workMs: 20 }),
      ),
    );
    const sold = results.filter((r) => r.ok).length;
    const stock = await client(apis[1]!.url).stock.get.query({ productId });
    // Each mode locks a different store, so they do overlap; the guarded writes keep the stock whole.
    // Which modes' writes took the stock below zero, should any ever do.
    const below = results.filter((r) => r.ok && r.stock < 0).map((r) => r.mode);
    expect(stock.qty, `writes below zero by: ${below.join(", ")}`).toBeGreaterThanOrEqual(0);
    expect(sold).toBe(10 - stock.qty);
  }, 60_000);

  it("watching an unknown run is NOT_FOUND", async () => {
    const code = await new Promise<string | undefined>((resolve) => {
      const sub = client(apis[0]!.url).demo.runs.watch.subscribe(
        { runId: "0123456789abcdef" },
        {
          onData: () => resolve("data"),
          onError: (err) => {
            sub.unsubscribe();
            resolve((err.data as { code?: string } | undefined)?.code);
          },
        },
      );
    });
    expect(code).toBe("NOT_FOUND");
  });

  it.each(["none", "local"] as const)(
    `%s oversells in ${UNSAFE_RUNS} of ${UNSAFE_RUNS} bursts at default settings`,
    async (mode) => {
      let oversold = 0;
      for (let i = 0; i < UNSAFE_RUNS; i++) {
        const r = await burst(apis[i % 2]!.url, { productId: `demo-runs-${mode}`, mode });
        expect(r.errors).toBe(0);
        // Both instances served requests: `local` oversells *across* instances.
        expect(Object.keys(r.perInstance).length).toBe(2);
        if (r.oversold > 0 && r.finalStock < 0 && r.successes === 100 + r.oversold) oversold++;
      }
      expect(oversold).toBe(UNSAFE_RUNS);
    },
    600_000,
  );

  it.each(["redis", "redlock", "postgres", "atomic"] as const)(
    `%s never oversells (${SAFE_RUNS} bursts)`,
    async (mode) => {
      for (let i = 0; i < SAFE_RUNS; i++) {
        const r = await burst(apis[i % 2]!.url, { productId: `demo-runs-${mode}`, mode });
        expect(r).toMatchObject({ successes: 100, oversold: 0, finalStock: 0, errors: 0 });
        expect(r.lowestStock).toBeGreaterThanOrEqual(0);
        expect(r.redisCommandsPerSuccess).toBeGreaterThan(0);
      }
    },
    180_000,
  );
});
