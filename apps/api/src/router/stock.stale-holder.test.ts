// Defect 5 of the correctness issue, driven through the API: a holder whose lock is lost mid-work must not
// oversell by writing after a newer holder read the same last unit. The lock key is deleted under the first
// deduct (as an expiry during a pause would), a second deduct takes the lock and reads qty = 1, then the
// first one's write lands before the second's.
import { setTimeout as sleep } from "node:timers/promises";
import { lockKey as libLockKey } from "@lockyard/lock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext, uid } from "../../test/context.js";
import { stockResource } from "../stock/keys.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext();
});
afterAll(() => t.close());

async function waitForHolder(key: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await t.redis.exists(key)) === 1) return;
    await sleep(5);
  }
  throw new Error(`${key} never held`);
}

describe("redis mode: a holder that lost its lock mid-work", () => {
  it("cannot sell the last unit a newer holder already read: stock never goes below zero", async () => {
    for (let run = 0; run < 5; run++) {
      const productId = uid("stale");
      const lockKey = libLockKey("lock:", stockResource(productId));
      await t.caller.stock.reset({ productId, qty: 1 });
      const first = t.caller.stock.deduct({ productId, mode: "redis", workMs: 400 });
      await waitForHolder(lockKey);
      await sleep(50); // the first holder has read qty = 1 and is working
      await t.redis.del(lockKey); // its lock is gone (an expiry during a pause)
      const second = t.caller.stock.deduct({ productId, mode: "redis", workMs: 800 });
      const [a, b] = await Promise.allSettled([first, second]);
      const sold = [a, b].filter((r) => r.status === "fulfilled" && r.value.ok).length;
      expect(sold, JSON.stringify([a, b])).toBeLessThanOrEqual(1);
      expect((await t.caller.stock.get({ productId })).qty).toBe(1 - sold);
      // The first holder's write came after the second holder's read: refused as stale, not applied.
      expect(a.status === "fulfilled" ? a.value : a.reason).toMatchObject({
        ok: false,
        reason: "stale-token",
      });
    }
  });
});
