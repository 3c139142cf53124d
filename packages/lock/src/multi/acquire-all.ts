import type { Clock } from "../core/clock.js";
import { InvalidOptionError } from "../errors.js";
import { checkMs } from "../options.js";
import type { AcquireOptions, LockHandle } from "../types.js";
import { MultiHandle, releaseAll } from "./handle.js";

/** Takes one lock: the Locks' own acquire (once = tryAcquire). */
export type TakeOne = (
  resource: string,
  opts: AcquireOptions | undefined,
  once: boolean,
) => Promise<LockHandle | null>;

/**
 * All or none: takes the locks one by one in `ordered` order (multi/order.ts) within one wait budget; a
 * refusal, timeout or error gives back what was taken (last first, in the background: a stalled store must
 * not stretch the budget, as a late grant of a single acquire is released in the background too).
 * `once` (tryAcquire) answers null when any lock is held.
 */
export async function acquireAll(
  take: TakeOne,
  clock: Clock,
  ordered: readonly string[],
  opts: AcquireOptions | undefined,
  defaultWaitMs: number,
  once: boolean,
): Promise<MultiHandle | null> {
  if (opts?.reads !== undefined) {
    throw new InvalidOptionError("reads", "set", "unset with several resources: acquire them one by one");
  }
  const waitMs = opts?.waitMs === undefined ? defaultWaitMs : opts.waitMs;
  const deadline = clock.now() + checkMs("waitMs", waitMs, 0);
  const noWait = waitMs === 0;
  const held: LockHandle[] = [];
  try {
    for (const resource of ordered) {
      // waitMs 0 tries each lock once, as for one lock. Otherwise the budget left for the rest, at least 1 ms:
      // 0 there would turn a nearly spent budget into an attempt with no deadline at all.
      const waitMs = noWait ? 0 : Math.max(1, Math.floor(deadline - clock.now()));
      const h = await take(resource, once ? opts : { ...opts, waitMs }, once);
      if (h === null) {
        giveBack(held);
        return null;
      }
      held.push(h);
    }
  } catch (err) {
    giveBack(held);
    throw err;
  }
  // One lock's fixed lease may have run out while the others were awaited: never answer with a set that is
  // not all held (its loss is LockLostError, as a grant answered too late is for one lock).
  const lost = held.find((h) => !h.isHeld());
  if (lost) {
    giveBack(held);
    throw lost.signal.reason;
  }
  return new MultiHandle(held);
}

function giveBack(held: readonly LockHandle[]): void {
  releaseAll(held).catch(() => {});
}
