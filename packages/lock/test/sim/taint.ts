import type { LockHandle } from "../../src/index.js";

/**
 * A hold granted early (core/early.ts) borrows the hold handing it over until that release runs: when the
 * handing hold's key was lost, so is this one's protection (the release's answer then takes it back). Known by
 * the handing owner's handle, or by its grant (its token is this one's - 1).
 */
export function handedByTainted(
  h: LockHandle,
  tainted: ReadonlySet<LockHandle>,
  taintedGrants: ReadonlyMap<string, number>,
): boolean {
  const handedBy = (h as { handedBy?: string }).handedBy;
  if (handedBy === undefined || h.token === null) return false;
  if (h.token - 1 <= (taintedGrants.get(`${h.key}\n${handedBy}`) ?? -1)) return true;
  for (const x of tainted) if (x.key === h.key && x.owner === handedBy) return true;
  return false;
}
