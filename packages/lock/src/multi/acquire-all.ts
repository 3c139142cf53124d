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
 * refusal, timeout or error releases what was taken (last first) before it is reported. `once` (tryAcquire)
 * answers null when any lock is held.
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
  const deadline = clock.now() + checkMs("waitMs", opts?.waitMs ?? defaultWaitMs, 0);
  const held: LockHandle[] = [];
  try {
    for (const resource of ordered) {
      // The budget left for the rest; 0 still makes one attempt (as acquire with waitMs 0 does).
      const waitMs = Math.max(0, Math.floor(deadline - clock.now()));
      const h = await take(resource, once ? opts : { ...opts, waitMs }, once);
      if (h === null) {
        await releaseAll(held).catch(() => {});
        return null;
      }
      held.push(h);
    }
  } catch (err) {
    await releaseAll(held).catch(() => {});
    throw err;
  }
  return new MultiHandle(held);
}
