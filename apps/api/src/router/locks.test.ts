import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext, uid } from "../../test/context.js";
import { createCaller } from "../root.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext();
});
afterAll(() => t.close());

describe("locks", () => {
  it("lists held locks with owner, holding instance, count, token and TTL", async () => {
    const resource = `test:${uid()}`;
    await t.locks.withLock(resource, async (outer) => {
      await t.locks.withLock(resource, async () => {
        const snap = await t.caller.locks.list({ prefix: resource });
        expect(snap.instanceId).toBe(t.ctx.config.instanceId);
        expect(snap.locks).toHaveLength(1);
        const [l] = snap.locks;
        expect(l).toMatchObject({ resource, key: `lock:{${resource}}`, token: outer.token });
        expect(l!.owners).toEqual([{ owner: outer.owner, count: 2, instanceId: t.ctx.config.instanceId }]);
        expect(l!.pttlMs).toBeGreaterThan(0);
        expect(l!.pttlMs).toBeLessThanOrEqual(2_000);
      });
    });
    expect((await t.caller.locks.list({ prefix: resource })).locks).toHaveLength(0);
  });

  it("watch streams snapshots as locks come and go, and stops when the client aborts", async () => {
    const resource = `test:${uid()}`;
    const abort = new AbortController();
    const caller = createCaller(t.ctx, { signal: abort.signal });
    const stream = await caller.locks.watch({ prefix: resource, intervalMs: 50 });
    const seen: number[] = [];
    let handle: Awaited<ReturnType<typeof t.locks.acquire>> | undefined;
    const started = performance.now();
    for await (const snap of stream) {
      seen.push(snap.locks.length);
      if (seen.length === 1) handle = await t.locks.acquire(resource);
      else if (snap.locks.length === 1 && handle) {
        await handle.release();
        handle = undefined;
      } else if (snap.locks.length === 0 && seen.includes(1)) abort.abort();
    }
    expect(seen[0]).toBe(0);
    expect(seen).toContain(1);
    expect(seen.at(-1)).toBe(0);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
