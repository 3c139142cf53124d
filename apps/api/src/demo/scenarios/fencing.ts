import type { LockHandle } from "@lockyard/lock";
import { fencedStockWrite } from "../../stock/fenced.js";
import { stockKey } from "../../stock/keys.js";
import { resetStock } from "../../stock/store.js";
import { childAcquires } from "./child-acquires.js";
import type { ScenarioScript } from "./types.js";

/**
 * Client A (a real child process) holds the lock, then freezes (SIGSTOP, a stand-in for a long GC
 * pause): its watchdog cannot renew, the lease ends and B takes over and writes. When A wakes up
 * it still believes it holds the lock and writes: the fence rejects it as STALE.
 */
export const fencing: ScenarioScript = async (tl) => {
  const { ctx } = tl;
  const res = tl.resource();
  const productId = `demo-fencing-${tl.runId}`;
  const leaseMs = tl.ms(2_000);
  await resetStock(ctx.redis, productId, 10);
  const got = await childAcquires(tl, res, leaseMs);
  const { child } = got;
  let b: LockHandle | undefined;
  try {
    await tl.pause(700);
    child.signal("SIGSTOP");
    await tl.emit("client A", "info", "freezes (SIGSTOP, like a long GC pause): no more renewals", {
      pid: got.pid,
    });
    b = await ctx.locks.acquire(res, { waitMs: leaseMs + 5_000, signal: tl.signal });
    await tl.emit("client B", "acquired", "A's lease expired: B acquires with a newer token", {
      token: b.token,
    });
    const bWrite = await fencedStockWrite(ctx.redis, productId, b.token ?? 0, -1);
    await tl.emit(
      "client B",
      "write",
      `writes stock with token ${b.token}: ${bWrite.ok ? "accepted" : "STALE"}`,
      {
        token: b.token,
        ok: bWrite.ok,
        qty: bWrite.ok ? bWrite.qty : null,
      },
    );
    const bResult = await b.release();
    await tl.emit("client B", "released", `releases → ${bResult}`, { result: bResult });
    child.signal("SIGCONT");
    await tl.emit("client A", "info", "wakes up, still believing it holds the lock, and writes");
    const aWrite = await child.ask({ type: "write", productId, delta: -1 }, 10_000);
    if (aWrite.type !== "written") throw new Error(`child write failed: ${JSON.stringify(aWrite)}`);
    await tl.emit(
      "client A",
      aWrite.ok ? "write" : "rejected",
      aWrite.ok
        ? `write with token ${aWrite.token} was accepted!`
        : `write with token ${aWrite.token} → STALE`,
      { token: aWrite.token, ok: aWrite.ok, knewItWasLost: !aWrite.stillHeld },
    );
    const ok = bWrite.ok && !aWrite.ok && (got.token ?? 0) < (b.token ?? 0);
    return {
      ok,
      summary: ok
        ? `the fence kept token ${got.token} from overwriting token ${b.token}'s write`
        : "expected B's write to pass and A's stale write to be rejected",
    };
  } finally {
    if (b?.isHeld()) await b.release().catch(() => undefined);
    await child.stop();
    await ctx.redis.del(stockKey(productId)).catch(() => 0);
  }
};
