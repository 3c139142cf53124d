// The checker itself, on real Redis: it must flag a real double grant. An operator deletes the
// key of a held lock; Redis then grants it to a second owner while the first lease is still valid.
import { createLocks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
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

it("flags two holders when the lock key is deleted under a live holder", async () => {
  const a = recorded(new Redis(server.url), "a");
  const b = recorded(new Redis(server.url), "b");
  const admin = new Redis(server.url);
  const la = createLocks({ redis: a.redis, leaseMs: 2_000, instanceId: "a" });
  const lb = createLocks({ redis: b.redis, leaseMs: 2_000, instanceId: "b" });
  try {
    const ha = await la.acquire("caught");
    await admin.del("lock:{caught}");
    const hb = await lb.acquire("caught", { waitMs: 0 });
    await hb.release();
    await ha.release();
    const v = check([a.source(), b.source()]);
    expect(v.overlaps).toHaveLength(1);
    expect(v.overlaps[0]).toMatchObject({ a: { owner: ha.owner }, b: { owner: hb.owner } });
    // Without the deletion the same two acquisitions pass.
    const clean = check([a.source(), { ...b.source(), ops: [] }]);
    expect(clean.overlaps).toEqual([]);
  } finally {
    await la.close();
    await lb.close();
    for (const r of [a.redis, b.redis, admin]) r.disconnect();
  }
});
