import type { LockHandle } from "@lockyard/lock";
import { listLocks } from "../../locks/snapshot.js";
import type { Timeline } from "../timeline.js";
import type { ScenarioResult, ScenarioScript } from "./types.js";

/**
 * A's lease (2 s, no watchdog) runs out while it still works (3 s); B takes the lock. A's late
 * release must not delete B's lock: ownership is checked atomically, so it answers `not-owner`.
 */
export const misdelete: ScenarioScript = async (tl) => {
  const held: LockHandle[] = [];
  try {
    return await story(tl, held);
  } finally {
    // An aborted run must not leave B's watchdog renewing forever.
    for (const h of held) if (h.isHeld()) await h.release().catch(() => undefined);
  }
};

async function story(tl: Timeline, held: LockHandle[]): Promise<ScenarioResult> {
  const { ctx } = tl;
  const res = tl.resource();
  const leaseMs = tl.ms(2_000);
  const a = await ctx.locks.acquire(res, { leaseMs, signal: tl.signal });
  held.push(a);
  await tl.emit("client A", "acquired", `acquires with a fixed lease of ${leaseMs} ms (no watchdog)`, {
    token: a.token,
    leaseMs,
  });
  await tl.emit("client A", "info", `works for ${tl.ms(3_000)} ms, longer than its lease`);
  const bTurn = (async () => {
    await tl.pause(200);
    await tl.emit("client B", "waiting", "wants the same lock and waits");
    const b = await ctx.locks.acquire(res, { waitMs: tl.ms(10_000) + 2_000, signal: tl.signal });
    held.push(b);
    await tl.emit("client B", "acquired", "A's lease expired: B acquires", { token: b.token });
    return b;
  })();
  await tl.pause(3_000);
  const b = await bTurn;
  const result = await a.release();
  await tl.emit("client A", "rejected", `finishes and releases → ${result}; B's lock is untouched`, {
    result,
  });
  const bHolds = (await listLocks(ctx.locks, res)).some((l) => l.owners.some((o) => o.owner === b.owner));
  await tl.emit("client B", "info", bHolds ? "still holds the lock" : "lost the lock!", { holds: bHolds });
  await tl.pause(500);
  const bResult = await b.release();
  await tl.emit("client B", "released", `releases → ${bResult}`, { result: bResult });
  const ok = result === "not-owner" && bHolds && bResult === "released";
  return {
    ok,
    summary: ok
      ? "A's late release answered not-owner and B kept its lock"
      : `expected not-owner and B keeping the lock (A=${result}, B holds=${bHolds})`,
  };
}
