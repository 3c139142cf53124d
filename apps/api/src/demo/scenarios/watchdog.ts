import { createLocks } from "@lockyard/lock";
import type { ScenarioScript } from "./types.js";

/** A lock held past its lease survives because the watchdog renews it every lease/3. */
export const watchdog: ScenarioScript = async (tl) => {
  const { ctx } = tl;
  const res = tl.resource();
  const leaseMs = tl.ms(3_000);
  let renewals = 0;
  let working = true;
  // Each event's lock snapshot is read after the event; the last one must be in before the release.
  let lastEmit: Promise<void> = Promise.resolve();
  const locks = createLocks({
    redis: ctx.redis,
    leaseMs,
    instanceId: ctx.config.instanceId,
    onEvent: (e) => {
      if (e.resource !== res) return;
      if (e.type === "renewed") {
        renewals++;
        if (!working) return;
        lastEmit = tl.emit("client A", "renewed", `watchdog renewed the lease (renewal ${renewals})`, {
          leaseMs: e.leaseMs,
        });
      } else if (e.type === "lost") {
        void tl.emit("client A", "expired", `lock lost: ${e.reason}`, { reason: e.reason });
      }
    },
  });
  try {
    await tl.emit(
      "client A",
      "info",
      `acquires without a lease: the watchdog keeps it (lease ${leaseMs} ms)`,
    );
    const h = await locks.acquire(res);
    await tl.emit("client A", "acquired", `holds ${res}`, { token: h.token, count: h.count, leaseMs });
    await tl.emit("client A", "info", `works for ${tl.ms(8_000)} ms, well past the lease`);
    await tl.pause(8_000);
    working = false;
    await lastEmit;
    const held = h.isHeld();
    const result = await h.release();
    await tl.emit("client A", "released", `work done; release → ${result}`, { result, renewals });
    const ok = held && renewals >= 2 && result === "released";
    return {
      ok,
      summary: ok
        ? `held for ${tl.ms(8_000)} ms on a ${leaseMs} ms lease thanks to ${renewals} renewals`
        : `expected the lock to survive with renewals (held=${held}, renewals=${renewals}, release=${result})`,
    };
  } finally {
    await locks.close();
  }
};
