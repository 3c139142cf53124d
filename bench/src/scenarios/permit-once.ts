import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import type { Contender } from "../contenders/types.js";

export interface PermitTaskOptions {
  /** The semaphore's name. */
  key: string;
  /** The Redis counter of current holders: the work under the permit is INCR → `workMs` → DECR on it. */
  gaugeKey: string;
  workMs: number;
}

/** One task's fate: the acquire failed or timed out, or it held a permit and saw `holders` holders (itself included). */
export type PermitTaskOutcome =
  | { kind: "error" }
  | { kind: "timeout" }
  | { kind: "held"; waitedMs: number; heldMs: number; holders: number; failed: boolean };

/** What a batch of tasks did, summed over its tasks. */
export interface PermitShare {
  acquired: number;
  timeouts: number;
  /** Acquire calls that threw, plus holds whose work or release threw. */
  errors: number;
  /** The largest INCR answer: the most holders Redis counted at once. More than the permits is a broken semaphore. */
  mostHolders: number;
  /** Sum of every hold's duration, ms: divided by the wall, the mean number of permits in use. */
  heldMs: number;
  /** ms from each task's acquire call to its permit. */
  waits: number[];
}

/**
 * One task: takes one permit, then INCR gauge → `workMs` → DECR gauge on the work connection, then releases.
 * The DECR is answered before the release is sent, and a correct semaphore grants the next permit only after
 * that release, so the INCR's answer counts exactly the holders at that moment, in every process alike.
 */
export async function permitTask(
  c: Contender,
  work: Redis,
  opts: PermitTaskOptions,
): Promise<PermitTaskOutcome> {
  const asked = performance.now();
  let h: Awaited<ReturnType<Contender["acquire"]>>;
  try {
    h = await c.acquire(opts.key);
  } catch {
    return { kind: "error" };
  }
  if (!h) return { kind: "timeout" };
  const heldFrom = performance.now();
  let holders = 0;
  let failed = false;
  try {
    holders = await work.incr(opts.gaugeKey);
    await sleep(opts.workMs);
    await work.decr(opts.gaugeKey);
  } catch {
    failed = true;
  }
  const heldMs = performance.now() - heldFrom;
  await h.release().catch(() => {
    failed = true;
  });
  return { kind: "held", waitedMs: heldFrom - asked, heldMs, holders, failed };
}

/** `tasks` permitTask contenders at once, summed. */
export async function permitShare(
  c: Contender,
  work: Redis,
  opts: PermitTaskOptions & { tasks: number },
): Promise<PermitShare> {
  const outcomes = await Promise.all(Array.from({ length: opts.tasks }, () => permitTask(c, work, opts)));
  const held = outcomes.flatMap((o) => (o.kind === "held" ? [o] : []));
  return {
    acquired: held.length,
    timeouts: outcomes.filter((o) => o.kind === "timeout").length,
    errors: outcomes.filter((o) => o.kind === "error").length + held.filter((o) => o.failed).length,
    mostHolders: Math.max(0, ...held.map((o) => o.holders)),
    heldMs: held.reduce((a, o) => a + o.heldMs, 0),
    waits: held.map((o) => o.waitedMs),
  };
}

/** permitShare from a zeroed gauge, timed. */
export async function contendForPermits(
  c: Contender,
  work: Redis,
  opts: PermitTaskOptions & { tasks: number },
): Promise<PermitShare & { wallMs: number }> {
  await work.set(opts.gaugeKey, 0);
  const t0 = performance.now();
  const share = await permitShare(c, work, opts);
  return { ...share, wallMs: performance.now() - t0 };
}
