import type { LockHandle, Locks } from "@lockyard/lock";
import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import { sleep } from "../lib/sleep.js";
import type { StockMode } from "../schemas.js";
import type { DeductResult } from "../types.js";
import { atomicDecrement } from "./atomic.js";
import { readForBarrier, waitForReads } from "./barrier.js";
import { type FenceField, fencedStockWrite } from "./fenced.js";
import { stockResource } from "./keys.js";
import { assertKnownProduct } from "./known-products.js";
import { withPgLock } from "./postgres-lock.js";
import { deductUnderRedisLock } from "./redis-lock.js";
import { type Outcome, runSection, type SectionResult } from "./section.js";
import { decrementQty, readQty } from "./store.js";
import { assertSafeForProduct } from "./unsafe-modes.js";
import { stockWrite } from "./write-outcome.js";

export interface DeductRequest {
  productId: string;
  quantity: number;
  mode: StockMode;
  workMs: number;
}

/** Modes whose requests on one product run one at a time, so their `workMs` queues up. */
const SERIALISED: ReadonlySet<StockMode> = new Set(["local", "redis", "redlock", "postgres"]);

/**
 * check → work → write, guarded as the mode says. The stock lives in Redis in every mode. `signal` (the
 * request's, aborted when its client goes away) and the instance's shutdown cancel the lock wait and the
 * work; a write already sent is not undone.
 */
export async function deduct(ctx: Context, req: DeductRequest, signal?: AbortSignal): Promise<DeductResult> {
  assertModeAvailable(ctx, req.mode);
  assertSafeForProduct(ctx, req);
  await assertKnownProduct(ctx.redis, req.productId);
  const leave = ctx.admission.enter(req.productId, req.workMs, SERIALISED.has(req.mode));
  // The atomic mode neither waits nor works: nothing there to stop.
  const call = req.mode === "atomic" ? undefined : ctx.drain.watch(signal);
  try {
    return await admitted(ctx, req, call?.signal ?? signal);
  } finally {
    call?.end();
    leave();
  }
}

async function admitted(
  ctx: Context,
  req: DeductRequest,
  signal: AbortSignal | undefined,
): Promise<DeductResult> {
  const started = performance.now();
  const base = { mode: req.mode, instanceId: ctx.config.instanceId };
  try {
    const { outcome, enteredAt } = await run(ctx, req, signal);
    ctx.metrics.deducts.inc({ mode: req.mode, outcome: outcome.ok ? "success" : outcome.reason });
    return { ...base, ...outcome, waitedMs: enteredAt - started };
  } catch (error) {
    const reason = lockFailure(error);
    if (!reason) throw error;
    ctx.metrics.deducts.inc({ mode: req.mode, outcome: reason });
    return { ...base, ok: false, reason, stock: null, waitedMs: performance.now() - started };
  }
}

function lockFailure(error: unknown): "lock-timeout" | "lock-lost" | null {
  if (!(error instanceof Error)) return null;
  if (error.name === "LockTimeoutError" || error.name === "QuorumError") return "lock-timeout";
  if (error.name === "LockLostError") return "lock-lost";
  return null;
}

async function run(
  ctx: Context,
  req: DeductRequest,
  signal: AbortSignal | undefined,
): Promise<SectionResult> {
  const { redis } = ctx;
  const { productId, quantity, workMs } = req;
  const either = (lockSignal: AbortSignal) => (signal ? AbortSignal.any([lockSignal, signal]) : lockSignal);
  // The unsafe modes: a check, then a blind decrement. A running burst's barrier makes their overlap certain.
  const unguarded = async (): Promise<Outcome> => {
    const { qty, target } = await readForBarrier(redis, productId);
    if (qty < quantity) return { ok: false, reason: "sold-out", stock: qty };
    await waitForReads(redis, productId, target, signal);
    await sleep(workMs, signal);
    return { ok: true, stock: await stockWrite(decrementQty(redis, productId, quantity)), token: null };
  };
  // Redlock: the same check under the lock, but the write refuses to go below zero (like every safe mode),
  // so safe modes mixed on one product cannot oversell even though each locks a different store.
  const guarded = async (lock: LockHandle): Promise<Outcome> => {
    const qty = await readQty(redis, productId);
    if (qty < quantity) return { ok: false, reason: "sold-out", stock: qty };
    await sleep(workMs, either(lock.signal));
    const r = await stockWrite(atomicDecrement(redis, productId, quantity));
    return r.ok ? { ok: true, stock: r.qty, token: null } : { ok: false, reason: "sold-out", stock: r.qty };
  };
  const fenced = async (lock: LockHandle, field: FenceField): Promise<Outcome> => {
    const qty = await readQty(redis, productId);
    if (qty < quantity) return { ok: false, reason: "sold-out", stock: qty };
    await sleep(workMs, either(lock.signal));
    const token = lock.token ?? 0;
    const r = await stockWrite(fencedStockWrite(redis, productId, token, -quantity, field));
    if (r.ok) return { ok: true, stock: r.qty, token };
    return r.reason === "insufficient"
      ? { ok: false, reason: "sold-out", stock: r.qty }
      : { ok: false, reason: "stale-token", stock: null };
  };
  switch (req.mode) {
    case "none":
      return runSection(unguarded);
    case "local":
      return ctx.localMutex.run(productId, () => runSection(unguarded));
    case "atomic":
      return runSection(async () => {
        await sleep(workMs, signal);
        const r = await stockWrite(atomicDecrement(redis, productId, quantity));
        return r.ok
          ? { ok: true, stock: r.qty, token: null }
          : { ok: false, reason: "sold-out", stock: r.qty };
      });
    case "redis":
      return deductUnderRedisLock(ctx, {
        productId,
        quantity,
        workMs,
        waitMs: ctx.config.lockWaitMs,
        signal,
      });
    case "postgres":
      // Fenced too, in a field of its own: PostgreSQL's tokens come from its sequence, not `fence:{r}`.
      return withPgLock(
        ctx,
        stockResource(productId),
        ctx.config.lockWaitMs,
        (lock) => runSection(() => fenced(lock, "pgFence")),
        signal,
      );
    case "redlock": {
      let written: SectionResult | undefined;
      try {
        return await withRedlock(ctx, (rl) =>
          rl.withLock(
            stockResource(productId),
            async (lock) => (written = await runSection(() => guarded(lock))),
            { waitMs: ctx.config.lockWaitMs, ...(signal ? { signal } : {}) },
          ),
        );
      } catch (error) {
        // The lock was found lost at its release, after the write ran: the write's floor kept the stock from
        // going below zero, and its answer is what happened to the stock. Saying "lock-lost" would hide a
        // sale that was made.
        if (written && error instanceof Error && error.name === "LockLostError") return written;
        throw error;
      }
    }
  }
}

/** An unavailable mode says so before anything touches Redis (an unknown product included). */
function assertModeAvailable(ctx: Context, mode: StockMode): void {
  const down = (mode === "redlock" && !ctx.redlock) || (mode === "postgres" && !ctx.postgres) ? mode : null;
  if (down === null) return;
  const reason = down === "redlock" ? ctx.redlockReason : ctx.postgresReason;
  throw new TRPCError({
    code: "PRECONDITION_FAILED",
    message: `mode "${down}" is unavailable on this instance: ${reason ?? "unavailable"}`,
  });
}

function withRedlock<T>(ctx: Context, fn: (rl: Locks) => Promise<T>): Promise<T> {
  if (!ctx.redlock) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: `mode "redlock" is unavailable on this instance: ${ctx.redlockReason}`,
    });
  }
  return fn(ctx.redlock);
}
