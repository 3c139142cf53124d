/** One queued call of a per-tick batch; the sender settles it. */
export interface Pending<R> {
  resolve(value: R): void;
  reject(reason: unknown): void;
}

/**
 * The most calls one script call carries. Small enough that a tick's calls from many callers go out as a few
 * script calls, which Redis runs one after another while this process writes the rest and handles the first
 * answers (64 loops on distinct keys, bench (b): ~40k pairs/s in one call of 64, ~44-55k in two of 32); large
 * enough that a call still carries the work of dozens.
 */
export const BATCH_CAP = 32;

/** Queues a call for the tick's batch; `flush()` sends the batch now (close(): calls already made go out first). */
export interface TickBatcher<E> {
  (entry: E): void;
  flush(): void;
}

/**
 * Collects the calls made in one tick and hands them to `send` together, once the current run of
 * callbacks and promise continuations is done (process.nextTick runs after the microtasks queued so
 * far, so callers resumed by the same Redis reply all land in one batch). A lone call costs one
 * nextTick and goes out as it would have alone.
 */
export function tickBatcher<E extends Pending<never>>(send: (batch: E[]) => void): TickBatcher<E> {
  let pending: E[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    if (batch.length > 0) send(batch);
  };
  const add = (entry: E) => {
    if (pending.length === 0) process.nextTick(flush);
    pending.push(entry);
  };
  return Object.assign(add, { flush });
}

/** Splits `items` into runs of at most `cap`, grouped by `groupOf` (a Cluster slot) first when given. */
export function chunks<T>(items: T[], cap: number, groupOf?: (item: T) => number): T[][] {
  let groups: T[][] = [items];
  if (groupOf) {
    const bySlot = new Map<number, T[]>();
    for (const it of items) {
      const g = groupOf(it);
      const list = bySlot.get(g);
      if (list) list.push(it);
      else bySlot.set(g, [it]);
    }
    groups = [...bySlot.values()];
  }
  const out: T[][] = [];
  for (const g of groups) {
    if (g.length <= cap) out.push(g);
    else for (let i = 0; i < g.length; i += cap) out.push(g.slice(i, i + cap));
  }
  return out;
}
