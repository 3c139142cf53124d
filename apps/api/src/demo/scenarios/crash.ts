import type { LockHandle } from "@lockyard/lock";
import { childAcquires } from "./child-acquires.js";
import type { ScenarioScript } from "./types.js";

/** The holder's process is SIGKILLed: nothing releases the lock, it frees itself at the lease end. */
export const crash: ScenarioScript = async (tl) => {
  const { ctx } = tl;
  const res = tl.resource();
  const leaseMs = tl.ms(3_000);
  const got = await childAcquires(tl, res, leaseMs);
  const { child } = got;
  let b: LockHandle | undefined;
  try {
    await tl.pause(1_500);
    child.signal("SIGKILL");
    const killedAt = performance.now();
    await tl.emit("client A", "killed", `process ${got.pid} is killed (SIGKILL): no release, no renewals`);
    await tl.emit("client B", "waiting", "wants the lock and waits");
    b = await ctx.locks.acquire(res, { waitMs: leaseMs + 5_000, signal: tl.signal });
    const afterKillMs = Math.round(performance.now() - killedAt);
    await tl.emit("client B", "acquired", `the lease ran out ${afterKillMs} ms after the crash: B acquires`, {
      token: b.token,
      afterKillMs,
    });
    const result = await b.release();
    await tl.emit("client B", "released", `releases → ${result}`, { result });
    const ok = afterKillMs <= leaseMs + 1_000 && result === "released";
    return {
      ok,
      summary: ok
        ? `the crashed holder's lock freed itself ${afterKillMs} ms after the kill (lease ${leaseMs} ms)`
        : `the lock took ${afterKillMs} ms to free (lease ${leaseMs} ms)`,
    };
  } finally {
    if (b?.isHeld()) await b.release().catch(() => undefined);
    await child.stop();
  }
};
