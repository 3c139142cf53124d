import type { Redis } from "ioredis";
import { defineScripts } from "../lib/scripts.js";
import { sleep } from "../lib/sleep.js";
import { barrierKey, stockKey } from "./keys.js";

/**
 * The start barrier of the unsafe demo modes. An unguarded check-then-write oversells only when checks
 * overlap writes, which a burst leaves to timing: a `none` burst once sold exactly the stock. While a burst
 * on a product runs in `none` or `local` mode, each deduct's read takes a ticket and its write waits until
 * the burst's later reads have happened:
 * - `none` (gap = every request in flight): all requests read before any writes, so all of them sell.
 * - `local` (gap = 1): a holder writes only after another instance's holder has read. Its own instance
 *   cannot read meanwhile (the mutex), so the two instances' critical sections always overlap, and the
 *   read of the last unit is always followed by the other instance's holder having read it too: oversold.
 * A deduct never waits longer than MAX_WAIT_MS, and waits not at all when no burst set a barrier.
 */
const MAX_WAIT_MS = 5_000;
const POLL_MS = 5;

// KEYS[1] stock hash, KEYS[2] barrier hash. Returns {qty, ticket, target}; ticket 0: no barrier.
const readLua = `
local qty = tonumber(redis.call('hget', KEYS[1], 'qty') or '0')
if redis.call('exists', KEYS[2]) == 0 then return {qty, 0, 0} end
local ticket = redis.call('hincrby', KEYS[2], 'reads', 1)
local total = tonumber(redis.call('hget', KEYS[2], 'total') or '0')
local gap = tonumber(redis.call('hget', KEYS[2], 'gap') or '0')
return {qty, ticket, math.min(total, ticket + gap)}
`;

const scripts = defineScripts<{
  lockyardBarrierRead(stock: string, barrier: string): Promise<[number, number, number]>;
}>({ name: "lockyardBarrierRead", numberOfKeys: 2, lua: readLua });

/** Sets the barrier for a burst of `inFlight` concurrent requests; `gap` as described above. */
export async function setBarrier(
  redis: Redis,
  productId: string,
  b: { inFlight: number; gap: number; ttlMs: number },
): Promise<void> {
  await redis
    .multi()
    .del(barrierKey(productId))
    .hset(barrierKey(productId), { total: b.inFlight, gap: b.gap, reads: 0 })
    .pexpire(barrierKey(productId), b.ttlMs)
    .exec();
}

export async function clearBarrier(redis: Redis, productId: string): Promise<void> {
  await redis.del(barrierKey(productId));
}

/** The unsafe modes' read: the quantity, and the point the write must wait for (0: none). */
export async function readForBarrier(
  redis: Redis,
  productId: string,
): Promise<{ qty: number; target: number }> {
  const [qty, , target] = await scripts(redis).lockyardBarrierRead(
    stockKey(productId),
    barrierKey(productId),
  );
  return { qty: Number(qty), target: Number(target) };
}

interface Waiting {
  target: number;
  /** performance.now() after which the entry is dropped (its deduct stopped waiting). */
  until: number;
  resolve: () => void;
}
/** Per connection and product: the deducts waiting here, served by one poll loop. */
const waiting = new WeakMap<Redis, Map<string, Waiting[]>>();

/** Resolves once the barrier has seen `target` reads, is gone, MAX_WAIT_MS passed, or `signal` aborted. */
export function waitForReads(
  redis: Redis,
  productId: string,
  target: number,
  signal?: AbortSignal,
): Promise<void> {
  if (target <= 0) return Promise.resolve();
  let products = waiting.get(redis);
  if (!products) {
    products = new Map();
    waiting.set(redis, products);
  }
  const map = products;
  const wait = new Promise<void>((resolve) => {
    const entry: Waiting = { target, until: performance.now() + MAX_WAIT_MS, resolve };
    const list = map.get(productId);
    if (list) list.push(entry);
    else {
      map.set(productId, [entry]);
      void poll(redis, map, productId);
    }
  });
  return Promise.race([wait, sleep(MAX_WAIT_MS, signal)]);
}

async function poll(redis: Redis, products: Map<string, Waiting[]>, productId: string): Promise<void> {
  for (;;) {
    // HMGET, not HGET: the report counts only the deduct path's own commands (demo/commandstats.ts).
    const [raw] = await redis.hmget(barrierKey(productId), "reads").catch(() => [null]);
    const reads = raw === null || raw === undefined ? Number.POSITIVE_INFINITY : Number(raw);
    const now = performance.now();
    // The list is read after the await: waiters added meanwhile are served too.
    const left = (products.get(productId) ?? []).filter((w) => {
      if (w.target > reads && w.until > now) return true;
      w.resolve();
      return false;
    });
    if (left.length === 0) {
      products.delete(productId);
      return;
    }
    products.set(productId, left);
    await sleep(POLL_MS);
  }
}
