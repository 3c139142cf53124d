import { existsSync } from "node:fs";
import autocannon from "autocannon";
import { apiServerPath, startApi } from "../harness/api-instances.js";
import { Collector, target } from "../harness/collect.js";
import { processCpuSeconds } from "../harness/proc-cpu.js";
import { progress } from "../harness/progress.js";
import { redisCpuSeconds } from "../harness/redis-cpu.js";
import { repoPath } from "../harness/repo.js";
import { ratios, rotate, spread } from "../harness/stats.js";
import type { BenchContext, ScenarioResult } from "./types.js";

const PRODUCTS = Array.from({ length: 100 }, (_, i) => `bench-${i + 1}`);
const MODES = ["atomic", "redis"] as const;
const CONNECTIONS = 32;
const TITLE = "(e) API: POST /trpc/stock.deduct on 100 products through both instances";

async function post(url: string, procedure: string, input: unknown): Promise<void> {
  const res = await fetch(`${url}/trpc/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  if (!res.ok) throw new Error(`${procedure} answered ${res.status}: ${await res.text()}`);
}

async function resetStock(url: string): Promise<void> {
  await Promise.all(PRODUCTS.map((productId) => post(url, "stock.reset", { productId, qty: 1_000_000 })));
}

async function fire(urls: string[], mode: string, seconds: number) {
  let k = 0;
  const result = await autocannon({
    url: urls,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: "POST",
        path: "/trpc/stock.deduct",
        headers: { "content-type": "application/json" },
        setupRequest(req) {
          const productId = PRODUCTS[k++ % PRODUCTS.length];
          return { ...req, body: JSON.stringify({ productId, quantity: 1, mode, workMs: 0 }) };
        },
      },
    ],
    verifyBody: (body) => body.includes('"ok":true'),
  });
  const ok = (result.statusCodeStats["200"]?.count ?? 0) - result.mismatches;
  return {
    ok,
    reqPerSec: ok / result.duration,
    p99: result.latency.p99,
    failed: result.non2xx + result.mismatches + result.errors,
  };
}

/** (e) autocannon against both API instances, lock-free `atomic` mode vs the Lockyard-guarded `redis` mode. */
export async function api(ctx: BenchContext): Promise<ScenarioResult> {
  const base = { id: "e", title: TITLE, columns: [], rows: [], settings: {}, notes: [] };
  if (!existsSync(apiServerPath())) {
    return { ...base, pending: `${apiServerPath()} does not exist yet (the API is not built).` };
  }
  const seconds = ctx.quick ? 1 : 3;
  const { freePort } = (await import(repoPath("scripts/lib/ports.mjs"))) as { freePort(): Promise<number> };
  await ctx.admin.flushall();
  let instances: Awaited<ReturnType<typeof startApi>>;
  try {
    instances = await startApi(ctx.redisUrl, [await freePort(), await freePort()]);
  } catch (err) {
    return { ...base, pending: `the API did not start: ${(err as Error).message}` };
  }
  const col = new Collector();
  const notes: string[] = [];
  try {
    progress(`(e) api · two instances up at ${instances.urls.join(", ")}; warming up`);
    await resetStock(instances.urls[0]!);
    for (const mode of MODES) await fire(instances.urls, mode, ctx.quick ? 1 : 2);
    for (let round = 1; round <= ctx.throughputRounds; round++) {
      for (const mode of rotate(MODES, round)) {
        await resetStock(instances.urls[0]!);
        const apiCpu = () => instances.pids.reduce((sum: number, pid) => sum + processCpuSeconds(pid), 0);
        const api0 = apiCpu();
        const redis0 = await redisCpuSeconds(ctx.admin);
        const r = await fire(instances.urls, mode, seconds);
        const apiUs = ((apiCpu() - api0) * 1e6) / r.ok;
        const redisUs = (((await redisCpuSeconds(ctx.admin)) - redis0) * 1e6) / r.ok;
        col.add(mode, "reqPerSec", r.reqPerSec);
        col.add(mode, "apiCpuUs", apiUs);
        col.add(mode, "redisCpuUs", redisUs);
        col.add(mode, "p99", r.p99);
        col.add(mode, "failed", r.failed);
        progress(
          `(e) api · ${mode} · round ${round}/${ctx.throughputRounds}: ${Math.round(r.reqPerSec)} req/s, p99 ${r.p99} ms, ${r.failed} failed, API ${apiUs.toFixed(0)} CPU µs/req`,
        );
      }
    }
  } catch (err) {
    return { ...base, pending: `the API scenario failed: ${(err as Error).message}` };
  } finally {
    await instances.stop();
  }
  const ratio = spread(ratios(col.values("redis", "reqPerSec"), col.values("atomic", "reqPerSec")));
  return {
    ...base,
    rowHeader: "mode",
    columns: [
      { key: "reqPerSec", header: "successful req/s", digits: 0 },
      { key: "p99", header: "p99 ms", digits: 0 },
      { key: "failed", header: "failed or not ok", digits: 0 },
      { key: "apiCpuUs", header: "API CPU µs/req (both instances)", digits: 0 },
      { key: "redisCpuUs", header: "Redis CPU µs/req", digits: 1 },
      { key: "ratio", header: "req/s ÷ atomic", digits: 2 },
    ],
    rows: MODES.map((mode) => ({
      id: mode,
      label:
        mode === "atomic" ? "atomic (one Lua decrement, no lock)" : "redis (Lockyard lock + fenced write)",
      values: {
        ...col.spreads(mode),
        ratio: mode === "redis" ? ratio : spread(col.values("atomic", "reqPerSec").map(() => 1)),
      },
      targets:
        mode === "redis"
          ? [target("redis-mode throughput ≥ 0.85× atomic", ratio.median, ">=", 0.85, "×")]
          : undefined,
    })),
    settings: {
      api: `2 instances (apps/api/dist/server.js, LOG_LEVEL=warn), autocannon ${CONNECTIONS} connections split over both, ${seconds} s per run, body { productId: bench-1…bench-100 round-robin, quantity: 1, mode, workMs: 0 }`,
    },
    notes: [
      "Each run starts from stock 1 000 000 per product (stock.reset); a response counts only when it is 200 with ok:true.",
      ...notes,
    ],
  };
}
