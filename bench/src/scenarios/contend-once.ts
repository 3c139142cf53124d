import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import type { Contender } from "../contenders/types.js";
import { countOverlaps } from "../harness/timeline.js";

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

/** One task's fate: the lock call failed or timed out, or it held the lock from `heldFrom` to `heldTo`. */
export type TaskOutcome =
  | { kind: "error" }
  | { kind: "timeout" }
  | {
      kind: "held";
      waitedMs: number;
      heldFrom: number;
      heldTo: number;
      /** The GET's round trip, the first thing done under the lock. */
      readMs: number;
      decremented: boolean;
      releaseFailed: boolean;
    };

/**
 * One contender task: wants the lock once and does GET → `workMs` → SET stock−1 under it (a task that sees
 * stock 0 still takes the lock but writes nothing). Shared by (c) and by each process of (f).
 */
export async function deductTask(
  c: Contender,
  work: Redis,
  opts: { key: string; stockKey: string; workMs: number },
): Promise<TaskOutcome> {
  const asked = performance.now();
  let h: Awaited<ReturnType<Contender["acquire"]>>;
  try {
    h = await c.acquire(opts.key);
  } catch {
    return { kind: "error" };
  }
  if (!h) return { kind: "timeout" };
  const heldFrom = performance.now();
  let decremented = false;
  let heldTo = heldFrom;
  let readMs = Number.NaN;
  let releaseFailed = false;
  try {
    const stock = Number(await work.get(opts.stockKey));
    readMs = performance.now() - heldFrom;
    await sleep(opts.workMs);
    if (stock > 0) {
      await work.set(opts.stockKey, stock - 1);
      decremented = true;
    }
  } finally {
    heldTo = performance.now();
    await h.release().catch(() => {
      releaseFailed = true;
    });
  }
  return { kind: "held", waitedMs: heldFrom - asked, heldFrom, heldTo, readMs, decremented, releaseFailed };
}

/** `tasks` concurrent deductTask contenders on one key, from stock `stock`. */
export async function contendOnce(
  c: Contender,
  work: Redis,
  opts: { key: string; stockKey: string; tasks: number; stock: number; workMs: number },
): Promise<ContendOutcome> {
  await work.set(opts.stockKey, opts.stock);
  const t0 = performance.now();
  const outcomes = await Promise.all(Array.from({ length: opts.tasks }, () => deductTask(c, work, opts)));
  const wallMs = performance.now() - t0;
  const held = outcomes.filter((o) => o.kind === "held");
  return {
    wallMs,
    acquired: held.length,
    timeouts: outcomes.filter((o) => o.kind === "timeout").length,
    errors: outcomes.filter((o) => o.kind === "error").length + held.filter((o) => o.releaseFailed).length,
    decrements: held.filter((o) => o.decremented).length,
    finalStock: Number(await work.get(opts.stockKey)),
    overlaps: countOverlaps(held.map((o) => [o.heldFrom, o.heldTo])),
  };
}

/**
 * `tasks` concurrent holds on one key that send nothing under the lock (acquire, then release at once): what the
 * handoff alone costs, the case in which a release put off until the new holder's first I/O has none to wait for.
 */
export async function contendBare(
  c: Contender,
  opts: { key: string; tasks: number },
): Promise<{ wallMs: number; acquired: number; failed: number }> {
  const t0 = performance.now();
  const outcomes = await Promise.all(
    Array.from({ length: opts.tasks }, async () => {
      const h = await c.acquire(opts.key).catch(() => null);
      if (!h) return false;
      return h.release().then(
        () => true,
        () => false,
      );
    }),
  );
  const acquired = outcomes.filter(Boolean).length;
  return { wallMs: performance.now() - t0, acquired, failed: opts.tasks - acquired };
}
