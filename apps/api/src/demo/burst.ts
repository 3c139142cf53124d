import { setMaxListeners } from "node:events";
import { TRPCClientError } from "@trpc/client";
import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import { sleep } from "../lib/sleep.js";
import type { AppRouter } from "../root.js";
import type { StockMode } from "../schemas.js";
import { readQty, resetStock } from "../stock/store.js";
import type { BurstEvent, BurstReport } from "../types.js";
import { type ApiClient, apiClients } from "./clients.js";
import { totalCommands } from "./commandstats.js";
import { percentiles } from "./percentiles.js";

export interface BurstRequest {
  productId: string;
  requests: number;
  initialStock: number;
  mode: StockMode;
  workMs: number;
}

export const MAX_BURST_REQUESTS = 1000;
const BURST_RESOURCE = "demo:burst";
const PROGRESS_EVERY_MS = 100;

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

/** Resets the stock, fires every request at once across all instances, streams progress, then a report. */
export async function* runBurst(
  ctx: Context,
  req: BurstRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<BurstEvent> {
  if (req.requests < 1 || req.requests > MAX_BURST_REQUESTS) {
    throw new TRPCError({
      code: "TOO_MANY_REQUESTS",
      message: `a burst fires 1 to ${MAX_BURST_REQUESTS} requests (got ${req.requests})`,
    });
  }
  if (req.mode === "redlock" && !ctx.redlock) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: `mode "redlock" is unavailable: ${ctx.redlockReason}`,
    });
  }
  if (req.mode === "postgres" && !ctx.postgres) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: `mode "postgres" is unavailable: ${ctx.postgresReason}`,
    });
  }
  // One burst at a time across every instance: the bursts would corrupt each other's figures.
  const guard = await ctx.locks.tryAcquire(BURST_RESOURCE);
  if (!guard) {
    throw new TRPCError({
      code: "TOO_MANY_REQUESTS",
      message: "another burst is running; try again when it ends",
    });
  }
  try {
    yield* fire(ctx, req, signal);
  } finally {
    await guard.release().catch((err: unknown) => ctx.logger.warn({ err }, "burst guard release failed"));
  }
}

async function* fire(
  ctx: Context,
  req: BurstRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<BurstEvent> {
  await resetStock(ctx.redis, req.productId, req.initialStock);
  const clients = apiClients(ctx.config.apiUrls.length > 0 ? ctx.config.apiUrls : []);
  if (clients.length === 0) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: "no API_URLS configured for the burst" });
  }
  // One signal for every request, so a departed subscriber cancels the lot.
  const cancel = new AbortController();
  setMaxListeners(req.requests + 10, cancel.signal);
  const onAbort = () => cancel.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    yield* fireAll(ctx, req, clients, cancel.signal);
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

async function* fireAll(
  ctx: Context,
  req: BurstRequest,
  clients: ApiClient[],
  signal: AbortSignal,
): AsyncGenerator<BurstEvent> {
  const { productId, mode, workMs } = req;
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
  const commandsBefore = await totalCommands(ctx.redis);
  const started = performance.now();
  const all = Promise.all(
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
        if (!(err instanceof TRPCClientError)) ctx.logger.warn({ err }, "burst request failed");
        else
          ctx.logger.debug(
            { code: (err as TRPCClientError<AppRouter>).data?.code },
            "burst request rejected",
          );
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
  while (!finished) {
    await Promise.race([all, sleep(PROGRESS_EVERY_MS)]);
    yield { type: "progress", done: tally.done, total: req.requests, stock: tally.lastStock };
  }
  const durationMs = performance.now() - started;
  const commands = (await totalCommands(ctx.redis)) - commandsBefore;
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
  yield report;
}

function recordMetrics(ctx: Context, r: BurstReport) {
  const m = ctx.metrics.bursts;
  m.inc({ mode: r.mode, outcome: "success" }, r.successes);
  m.inc({ mode: r.mode, outcome: "sold-out" }, r.soldOut);
  m.inc({ mode: r.mode, outcome: "error" }, r.errors);
  for (const [reason, n] of Object.entries(r.rejected)) m.inc({ mode: r.mode, outcome: reason }, n);
  ctx.metrics.burstOversold.inc({ mode: r.mode }, r.oversold);
}
