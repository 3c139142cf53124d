import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import type { Contender } from "../contenders/types.js";

export interface ContendOutcome {
  wallMs: number;
  acquired: number;
  timeouts: number;
  errors: number;
  decrements: number;
  finalStock: number;
  /** Holds that started before an earlier hold ended: a broken lock, which should never happen. */
  overlaps: number;
}

/**
 * `tasks` concurrent contenders on one key, each wanting the lock once and doing GET → `workMs` → SET stock−1
 * under it (a task that sees stock 0 still takes the lock but writes nothing).
 */
export async function contendOnce(
  c: Contender,
  work: Redis,
  opts: { key: string; stockKey: string; tasks: number; stock: number; workMs: number },
): Promise<ContendOutcome> {
  await work.set(opts.stockKey, opts.stock);
  const holds: [number, number][] = [];
  let timeouts = 0;
  let errors = 0;
  let decrements = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: opts.tasks }, async () => {
      let h: Awaited<ReturnType<Contender["acquire"]>>;
      try {
        h = await c.acquire(opts.key);
      } catch {
        errors++;
        return;
      }
      if (!h) {
        timeouts++;
        return;
      }
      const start = performance.now();
      try {
        const stock = Number(await work.get(opts.stockKey));
        await sleep(opts.workMs);
        if (stock > 0) {
          await work.set(opts.stockKey, stock - 1);
          decrements++;
        }
      } finally {
        holds.push([start, performance.now()]);
        await h.release().catch(() => {
          errors++;
        });
      }
    }),
  );
  const wallMs = performance.now() - t0;
  return {
    wallMs,
    acquired: holds.length,
    timeouts,
    errors,
    decrements,
    finalStock: Number(await work.get(opts.stockKey)),
    overlaps: countOverlaps(holds),
  };
}

function countOverlaps(holds: [number, number][]): number {
  const sorted = [...holds].sort((a, b) => a[0] - b[0]);
  let overlaps = 0;
  let lastEnd = Number.NEGATIVE_INFINITY;
  for (const [start, end] of sorted) {
    if (start < lastEnd) overlaps++;
    lastEnd = Math.max(lastEnd, end);
  }
  return overlaps;
}
