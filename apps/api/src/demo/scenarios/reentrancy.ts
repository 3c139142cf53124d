import { listLocks } from "../../locks/snapshot.js";
import type { ScenarioScript } from "./types.js";

/** withLock inside withLock on the same resource re-enters: the count goes 1 → 2 → 1 → gone. */
export const reentrancy: ScenarioScript = async (tl) => {
  const { ctx } = tl;
  const res = tl.resource();
  const counts: number[] = [];
  const count = async () => {
    const [lock] = await listLocks(ctx.locks, res);
    const n = lock?.owners.reduce((sum, o) => sum + o.count, 0) ?? 0;
    counts.push(n);
    return n;
  };
  let sameOwner = false;
  await ctx.locks.withLock(res, async (outer) => {
    await tl.emit("client A", "acquired", "outer withLock acquires", {
      count: await count(),
      token: outer.token,
    });
    await tl.pause(1_000);
    await ctx.locks.withLock(res, async (inner) => {
      sameOwner = inner.owner === outer.owner;
      await tl.emit("client A", "acquired", "inner withLock re-enters as the same owner", {
        count: await count(),
        sameOwner,
        token: inner.token,
      });
      await tl.pause(1_000);
    });
    await tl.emit("client A", "released", "inner scope exits: count back to 1", { count: await count() });
    await tl.pause(1_000);
  });
  await tl.emit("client A", "released", "outer scope exits: the lock is deleted", { count: await count() });
  const ok = sameOwner && counts.join(",") === "1,2,1,0";
  return {
    ok,
    summary: ok
      ? "count went 1 → 2 → 1 → gone"
      : `unexpected counts ${counts.join(" → ")} (sameOwner=${sameOwner})`,
  };
};
