import {
  type FencedReadResult,
  fencedRead,
  fencedWrite,
  type LockHandle,
  LockLostError,
} from "@lockyard/lock";
import type { Context } from "../context.js";
import { sleep } from "../lib/sleep.js";
import { stockKey, stockResource } from "./keys.js";
import { type Outcome, runSection, type SectionResult } from "./section.js";
import { stockWrite, writeFailure } from "./write-outcome.js";

/**
 * The `redis` mode: check → work → fenced write under a Lockyard lock, in two round trips (acquire+read,
 * write+release). Not withLock: its AsyncLocalStorage scope serves re-entry, which a deduct
 * never does, and costs every request. Its guarantees are kept by hand: a lock lost before the write fails
 * the deduct with LockLostError, the write is fenced whatever happens, and a failed release never hides the
 * callback's own error.
 */
export async function deductUnderRedisLock(
  ctx: Context,
  req: {
    productId: string;
    quantity: number;
    workMs: number;
    waitMs: number;
    signal?: AbortSignal | undefined;
  },
): Promise<SectionResult> {
  const { productId, quantity, workMs, waitMs, signal } = req;
  const key = stockKey(productId);
  // The quantity is read in the acquire's round trip, after the grant: it is the value under the lock. The
  // read registers this holder's token on the stock, so a holder that lost the lock before us and writes
  // after our read is refused as stale (the library's README, fencedRead).
  const lock = await ctx.locks.acquire(stockResource(productId), {
    waitMs,
    reads: fencedRead(key, ["qty"]),
    ...(signal ? { signal } : {}),
  });
  let released = false;
  let result: SectionResult;
  try {
    result = await runSection(async (): Promise<Outcome> => {
      const read = (await lock.reads) as FencedReadResult;
      if (read.state === "stale") return { ok: false, reason: "stale-token", stock: null };
      const qty = read.values[0] == null ? 0 : Number(read.values[0]);
      if (qty < quantity) return { ok: false, reason: "sold-out", stock: qty };
      // Reading `signal` makes an AbortController: only when there is work to abort.
      if (workMs > 0) await sleep(workMs, signal ? AbortSignal.any([lock.signal, signal]) : lock.signal);
      assertHeld(lock);
      const token = lock.token ?? 0;
      released = true;
      // The write goes out just before the release, in the same batch: a release that failed in flight
      // leaves the write's outcome unknown too.
      const { write } = await stockWrite(lock.releaseAfter((r) => fencedWrite(r, key, token, -quantity)));
      if (write.status === "rejected") throw writeFailure(write.reason);
      const w = write.value;
      if (w.ok) return { ok: true, stock: w.qty, token };
      return w.reason === "STALE"
        ? { ok: false, reason: "stale-token", stock: null }
        : { ok: false, reason: "sold-out", stock: w.qty };
    });
  } catch (err) {
    if (!released) await lock.release().catch(() => {});
    throw err;
  }
  if (!released) {
    await lock.release();
    assertNotLost(lock);
  }
  return result;
}

function assertHeld(lock: LockHandle): void {
  if (lock.isHeld()) return;
  throw lock.signal.reason ?? new LockLostError(lock.resource, lock.owner, "deadline");
}

/** A sold-out answer read while the lock was already lost is not trusted either (as withLock would say). */
function assertNotLost(lock: LockHandle): void {
  const reason: unknown = lock.signal.aborted ? lock.signal.reason : undefined;
  if (reason) throw reason;
}
