import { setMaxListeners } from "node:events";
import { TRPCClientError } from "@trpc/client";
import { createApiClient } from "../client.js";
import type { Context } from "../context.js";
import { pooledFetch } from "../lib/agent-fetch.js";
import { sleep } from "../lib/sleep.js";
import type { stockRouter } from "../router/stock.js";
import type { StockMode } from "../schemas.js";
import { clearBarrier, setBarrier } from "../stock/barrier.js";
import { readQty } from "../stock/store.js";
import type { router } from "../trpc.js";
import type { BurstReport } from "../types.js";
import { BurstTrace } from "./burst-trace.js";
import { deductCommands } from "./commandstats.js";
import { percentiles } from "./percentiles.js";
import type { RunLog } from "./runs/run.js";

const PROGRESS_EVERY_MS = 100;
/**
 * Connections the burst opens to each instance. Below MAX_CONNECTIONS_PER_CLIENT's default (256), which
 * the instances apply to the burst's own address too; requests beyond it queue in the pool.
 */
export const BURST_CONNECTIONS_PER_INSTANCE = 200;
/** After a cancel, how long the instances get to see their requests' connections close and stop. */
const CANCEL_SETTLE_MS = 500;
/** The barrier outlives any burst's reads; the burst deletes it when done. */
const BARRIER_TTL_MS = 120_000;

/** All the burst calls: the stock router, typed without importing root.ts (which imports the burst). */
type StockApi = ReturnType<typeof router<{ stock: typeof stockRouter }>>;

export interface BurstRequest {
  productId: string;
  requests: number;
  initialStock: number;
  mode: StockMode;
  workMs: number;
}

interface Tally {
  done: number;
  successes: number;
  soldOut: number;
  rejected: Record<string, number>;
  errors: number;
  lastStock: number;
  lowestStock: number;
  latencies: number[];
  perInstance: Record<string, number>;
}

/**
 * Fires every request at once across all instances (typed tRPC clients over HTTP), logs progress, and
 * returns the report once every request has settled. `signal` cancels the outstanding requests: their
 * connections close, which aborts the deducts' lock waits and work on the instances.
 */
export async function fireBurst(
  ctx: Context,
  req: BurstRequest,
  log: RunLog,
  signal: AbortSignal,
): Promise<BurstReport> {
  const pool = pooledFetch(BURST_CONNECTIONS_PER_INSTANCE);
  const traced = new BurstTrace(req, log.runId);
  try {
    const report = await fireWith(ctx, req, log, signal, traced.fetch(pool.fetch));
    traced.end({ report });
    return traced.traceId === undefined ? report : { ...report, traceId: traced.traceId };
  } catch (error) {
    traced.end({ error });
    throw error;
  } finally {
    pool.close();
  }
}

async function fireWith(
  ctx: Context,
  req: BurstRequest,
  log: RunLog,
  signal: AbortSignal,
  fetch: typeof globalThis.fetch,
): Promise<BurstReport> {
  const urls = ctx.config.apiUrls;
  const clients = urls.map((base) => createApiClient<StockApi>(base, { fetch }));
  setMaxListeners(req.requests + 10, signal);
  const unsafe = req.mode === "none" || req.mode === "local";
  if (unsafe) {
    const inFlight = Math.min(req.requests, urls.length * BURST_CONNECTIONS_PER_INSTANCE);
    await setBarrier(ctx.redis, req.productId, {
      inFlight,
      gap: req.mode === "none" ? inFlight : 1,
      ttlMs: BARRIER_TTL_MS,
    });
  }
  const tally: Tally = {
    done: 0,
    successes: 0,
    soldOut: 0,
    rejected: {},
    errors: 0,
    lastStock: req.initialStock,
    lowestStock: req.initialStock,
    latencies: [],
    perInstance: {},
  };
  const { productId, mode, workMs } = req;
  const commandsBefore = await deductCommands(ctx.redis);
  const started = performance.now();
  const all = Promise.allSettled(
    Array.from({ length: req.requests }, async (_, i) => {
      const client = clients[i % clients.length]!;
      const t0 = performance.now();
      try {
        const r = await client.stock.deduct.mutate({ productId, quantity: 1, mode, workMs }, { signal });
        tally.perInstance[r.instanceId] = (tally.perInstance[r.instanceId] ?? 0) + 1;
        if (r.stock !== null) {
          tally.lastStock = r.stock;
          tally.lowestStock = Math.min(tally.lowestStock, r.stock);
        }
        if (r.ok) tally.successes++;
        else if (r.reason === "sold-out") tally.soldOut++;
        else tally.rejected[r.reason] = (tally.rejected[r.reason] ?? 0) + 1;
      } catch (err) {
        tally.errors++;
        const code = err instanceof TRPCClientError ? (err.data as { code?: string })?.code : undefined;
        if (!signal.aborted) ctx.logger.debug({ err, code }, "burst request failed");
      } finally {
        tally.latencies.push(performance.now() - t0);
        tally.done++;
      }
    }),
  );
  let finished = false;
  void all.finally(() => {
    finished = true;
  });
  try {
    while (!finished) {
      await Promise.race([all, sleep(PROGRESS_EVERY_MS)]);
      await log.emit({ type: "progress", done: tally.done, total: req.requests, stock: tally.lastStock });
    }
  } finally {
    await all;
    if (signal.aborted) await sleep(CANCEL_SETTLE_MS);
    if (unsafe) await clearBarrier(ctx.redis, productId).catch(() => undefined);
  }
  if (signal.aborted) throw new Error(`burst cancelled after ${tally.done} of ${req.requests} requests`);
  const durationMs = performance.now() - started;
  const commands = (await deductCommands(ctx.redis)) - commandsBefore;
  const finalStock = await readQty(ctx.redis, productId);
  const report: BurstReport = {
    type: "report",
    mode,
    requests: req.requests,
    initialStock: req.initialStock,
    successes: tally.successes,
    soldOut: tally.soldOut,
    rejected: tally.rejected,
    errors: tally.errors,
    finalStock,
    lowestStock: Math.min(tally.lowestStock, finalStock),
    oversold: Math.max(0, tally.successes - req.initialStock),
    durationMs: Math.round(durationMs),
    latencyMs: percentiles(tally.latencies),
    perInstance: tally.perInstance,
    redisCommandsPerSuccess: tally.successes > 0 ? Math.round((commands / tally.successes) * 10) / 10 : null,
  };
  recordMetrics(ctx, report);
  return report;
}

function recordMetrics(ctx: Context, r: BurstReport) {
  const m = ctx.metrics.bursts;
  m.inc({ mode: r.mode, outcome: "success" }, r.successes);
  m.inc({ mode: r.mode, outcome: "sold-out" }, r.soldOut);
  m.inc({ mode: r.mode, outcome: "error" }, r.errors);
  for (const [reason, n] of Object.entries(r.rejected)) m.inc({ mode: r.mode, outcome: reason }, n);
  ctx.metrics.burstOversold.inc({ mode: r.mode }, r.oversold);
}
