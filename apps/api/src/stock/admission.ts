import { TRPCError } from "@trpc/server";

export interface AdmissionLimits {
  /** Deducts in flight (queued or running) per product on this instance. */
  maxWaiters: number;
  /** Sum of `workMs` in flight per product on this instance, for the modes that run one at a time. */
  maxQueuedWorkMs: number;
}

interface Load {
  waiters: number;
  workMs: number;
}

/**
 * Per-product admission for stock.deduct. A client chooses `workMs`, and in the lock modes every request
 * on a product runs after the ones before it, so unbounded queues let one client lock a product for
 * everyone. Beyond either cap a deduct is refused with TOO_MANY_REQUESTS before it waits for anything.
 * Entries exist only while requests are in flight, so the map is bounded by concurrent requests.
 */
export class Admission {
  readonly #load = new Map<string, Load>();

  constructor(readonly limits: AdmissionLimits) {}

  /** Admits one deduct; call the returned function when it settles. */
  enter(productId: string, workMs: number, serialised: boolean): () => void {
    const load = this.#load.get(productId) ?? { waiters: 0, workMs: 0 };
    const work = serialised ? workMs : 0;
    if (load.waiters + 1 > this.limits.maxWaiters) {
      throw new TRPCError({
        code: "TOO_MANY_REQUESTS",
        message: `${load.waiters} deducts already queued on product ${productId} (MAX_WAITERS_PER_PRODUCT)`,
      });
    }
    if (work > 0 && load.workMs + work > this.limits.maxQueuedWorkMs) {
      throw new TRPCError({
        code: "TOO_MANY_REQUESTS",
        message: `product ${productId} already has ${load.workMs} ms of work queued behind its lock (MAX_QUEUED_WORK_MS)`,
      });
    }
    load.waiters += 1;
    load.workMs += work;
    this.#load.set(productId, load);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      load.waiters -= 1;
      load.workMs -= work;
      if (load.waiters === 0) this.#load.delete(productId);
    };
  }
}
