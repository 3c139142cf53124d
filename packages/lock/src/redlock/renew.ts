import type { Clock } from "../core/clock.js";
import { QuorumError } from "../errors.js";
/** Per lock: true (a quorum renewed it), false (a quorum can no longer hold it) or undefined (undecided). */
export type Verdicts = (boolean | undefined)[];

/**
 * Counts the nodes' renewal answers (one array of 1/0 per node, one entry per lock) and decides each lock
 * as soon as its answers allow. Resolves when every lock is decided, or as soon as any refusal is decided,
 * so that a lost lock is applied at once however long another lock of the batch would wait on a slow node;
 * else when every node has answered or failed, or after `timeoutMs`. Locks still undecided then are
 * undefined; `mostYes` and `error` (the first node failure) are for a QuorumError.
 */
export function tallyRenewals(
  clock: Clock,
  calls: Promise<number[]>[],
  locks: number,
  quorum: number,
  timeoutMs: number,
): Promise<{ verdicts: Verdicts; mostYes: number; error: unknown }> {
  const n = calls.length;
  const yes = new Array<number>(locks).fill(0);
  const no = new Array<number>(locks).fill(0);
  const decide = (i: number) => (yes[i]! >= quorum ? true : no[i]! > n - quorum ? false : undefined);
  return new Promise((resolve) => {
    let pending = n;
    let done = false;
    let error: unknown;
    const finish = () => {
      if (done) return;
      done = true;
      clock.clearTimer(timer);
      const verdicts = Array.from({ length: locks }, (_, i) => decide(i));
      resolve({ verdicts, mostYes: Math.max(0, ...yes), error });
    };
    const check = () => {
      if (pending === 0) return finish();
      let open = false;
      for (let i = 0; i < locks; i++) {
        const d = decide(i);
        if (d === false) return finish();
        if (d === undefined) open = true;
      }
      if (!open) finish();
    };
    const timer = clock.setTimer(finish, Math.max(1, timeoutMs));
    for (const p of calls) {
      p.then(
        (answer) => {
          if (done) return;
          for (let i = 0; i < locks; i++) {
            if (answer[i] === 1) yes[i] = yes[i]! + 1;
            else no[i] = no[i]! + 1;
          }
        },
        (err: unknown) => {
          error ??= err;
        },
      ).then(() => {
        pending--;
        if (!done) check();
      });
    }
    if (n === 0) finish();
  });
}

/** Renewal verdicts of a batch; throws QuorumError when no lock at all is decided. */
export async function renewOnQuorum(
  s: { quorum: number; nodeTimeoutMs: number; clock: Clock },
  calls: Promise<number[]>[],
  locks: number,
): Promise<Verdicts> {
  const { verdicts, mostYes, error } = await tallyRenewals(s.clock, calls, locks, s.quorum, s.nodeTimeoutMs);
  if (verdicts.every((v) => v === undefined)) throw new QuorumError(s.quorum, mostYes, { cause: error });
  return verdicts;
}
