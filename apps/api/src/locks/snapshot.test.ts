import type { Server } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { startDelayProxy } from "../../../../scripts/lib/delay-proxy.mjs";
// @ts-expect-error plain .mjs helper without types
import { freePort } from "../../../../scripts/lib/ports.mjs";
import { testContext, uid } from "../../test/context.js";
import { listAllLocks, lockSources } from "./snapshot.js";

let t: Awaited<ReturnType<typeof testContext>>;
let proxy: Server;
let slow: Redis;
beforeAll(async () => {
  t = await testContext();
  // 100 ms each way: every read of the list takes 200 ms or more.
  const port = await freePort();
  proxy = (await startDelayProxy(port, inject("redisUrl"), 100)) as Server;
  slow = new Redis(`redis://127.0.0.1:${port}`);
});
afterAll(async () => {
  slow?.disconnect();
  proxy?.close();
  await t.close();
});

it("locks.list shows no TTL above Redis's: it counts from each read's answer, not from before the scan", async () => {
  const resource = `ttl:${uid()}`;
  const h = await t.locks.acquire(resource, { leaseMs: 2_000 });
  try {
    const views = await listAllLocks(slow, lockSources(t.ctx).slice(0, 1), resource);
    expect(views.map((v) => v.resource)).toEqual([resource]);
    // Counted from before the scan, it came out longer than the lease by the scan's time (here ≥ 200 ms).
    expect(views[0]!.pttlMs).toBeGreaterThan(0);
    expect(views[0]!.pttlMs).toBeLessThanOrEqual(2_000);
  } finally {
    await h.release();
  }
});
