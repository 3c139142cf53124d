// The wire recorder the no-two-holders checker reads: batches (several locks in one script call) are split into
// one record per lock with its key, owner, lease and slice of the reply. The layouts follow the scripts' headers;
// this pins them against batches the library really sends.
import { createLocks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { OpRecord } from "../fixtures/wire.mjs";
import { check } from "../src/checker.js";
import { recorded } from "../src/recorder.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

it("splits acquire and release batches into one record per lock, with its key, owner, lease and reply", async () => {
  const rec = recorded(new Redis(server.url), "batch");
  const locks = createLocks({ redis: rec.redis, leaseMs: 2_000, instanceId: "batch" });
  try {
    // Acquired in one tick: one acquireMany; released in one tick: one releaseMany.
    const held = await Promise.all(["w1", "w2", "w3"].map((r) => locks.acquire(r)));
    await Promise.all(held.map((h) => h.release()));
    const { ops } = rec.source();
    const byOp = (op: string) => ops.filter((o: OpRecord) => o.op === op);
    expect(byOp("acquire")).toHaveLength(3);
    expect(byOp("release")).toHaveLength(3);
    for (const [i, h] of held.entries()) {
      const acquire = byOp("acquire")[i]!;
      expect(acquire.items).toEqual([{ key: `lock:{w${i + 1}}`, owner: h.owner, leaseMs: 2_000 }]);
      expect(acquire.reply).toEqual([1, 1, h.token]);
      const release = byOp("release")[i]!;
      expect(release.items).toEqual([{ key: `lock:{w${i + 1}}`, owner: h.owner, leaseMs: 2_000 }]);
      expect((release.reply as number[])[0]).toBe(2);
    }
    // And the checker makes three closed holds of them.
    const v = check([rec.source()]);
    expect(v.holds.map((h) => [h.key, h.owner, h.token])).toEqual(
      held.map((h, i) => [`lock:{w${i + 1}}`, h.owner, h.token]),
    );
    expect(v.holds.every((h) => Number.isFinite(h.end))).toBe(true);
  } finally {
    await locks.close();
    rec.redis.disconnect();
  }
});
