import type { Clock } from "../core/clock.js";
/** One node's answer: its reply, or the error (a timeout included) that stands for "no answer". */
export type NodeAnswer<T> = { ok: true; value: T } | { ok: false; error: unknown };

export class NodeTimeoutError extends Error {
  override name = "NodeTimeoutError";
  constructor(ms: number) {
    super(`the node did not answer within ${Math.round(ms)} ms`);
  }
}

/**
 * Waits for every node's answer, but no longer than `timeoutMs` in all: a node that neither answers nor
 * fails (paused, or a client that queues commands while disconnected) counts as no answer, so it cannot
 * hold up the quorum. One timer per operation, not per node.
 */
export function settleAll<T>(clock: Clock, calls: Promise<T>[], timeoutMs: number): Promise<NodeAnswer<T>[]> {
  return new Promise((resolve) => {
    const out: (NodeAnswer<T> | undefined)[] = new Array(calls.length);
    let pending = calls.length;
    const finish = () => {
      clock.clearTimer(timer);
      const timeout = new NodeTimeoutError(timeoutMs);
      // Array.from, not map: map skips the holes left by nodes that never answered.
      resolve(Array.from(out, (a) => a ?? { ok: false, error: timeout }));
    };
    const timer = clock.setTimer(finish, Math.max(1, timeoutMs));
    calls.forEach((p, i) => {
      p.then(
        (value) => {
          out[i] ??= { ok: true, value };
        },
        (error: unknown) => {
          out[i] ??= { ok: false, error };
        },
      ).then(() => {
        if (--pending === 0) finish();
      });
    });
    if (calls.length === 0) finish();
  });
}

/** The first error among the answers, as the `cause` of a QuorumError (never a growing list). */
export function firstError(answers: NodeAnswer<unknown>[]): unknown {
  for (const a of answers) if (!a.ok) return a.error;
  return undefined;
}
