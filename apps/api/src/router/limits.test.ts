// Issue 18's limits on one context over real Redis: unknown products, per-product admission, workMs bounds,
// scenario slots, demo products, the admin token on runs and on the unsafe modes, and public system.info.
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext, uid } from "../../test/context.js";
import { watchAll } from "../../test/runs.js";
import { createContextInner } from "../context.js";
import { createCaller } from "../root.js";
import { Admission } from "../stock/admission.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext({ config: { maxScenarios: 2, maxScenariosPerClient: 1 } });
});
afterAll(() => t.close());

async function codeOf(p: Promise<unknown>): Promise<string | null> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  return err instanceof TRPCError ? err.code : null;
}

/** A caller on the same services as `t`, as another client (address) or with another admin token. */
async function callerAs(request: { clientAddress?: string; adminToken?: string }, config = {}) {
  const ctx = await createContextInner({ ...t.ctx, config: { ...t.ctx.config, ...config } }, request);
  return createCaller(ctx);
}

describe("stock.deduct limits", () => {
  it("refuses unknown products in every mode, taking no lock and leaving no key", async () => {
    const before = await t.redis.dbsize();
    for (const mode of ["none", "local", "redis", "atomic"] as const) {
      expect(await codeOf(t.caller.stock.deduct({ productId: uid("nope"), mode }))).toBe("NOT_FOUND");
    }
    expect(await t.redis.dbsize()).toBe(before);
  });

  it("with ADMIN_TOKEN set, the modes that oversell run only on demo products or for the admin", async () => {
    const shop = uid("shop");
    const demo = uid("demo-p");
    for (const productId of [shop, demo]) await t.caller.stock.reset({ productId, qty: 10 });
    const stranger = await callerAs({}, { adminToken: "s3cret" });
    const admin = await callerAs({ adminToken: "s3cret" }, { adminToken: "s3cret" });
    for (const mode of ["none", "local"] as const) {
      expect(await codeOf(stranger.stock.deduct({ productId: shop, mode }))).toBe("FORBIDDEN");
    }
    expect(await t.redis.hget(`stock:{${shop}}`, "qty")).toBe("10");
    expect(await codeOf(stranger.stock.deduct({ productId: demo, mode: "none" }))).toBeNull();
    expect(await codeOf(stranger.stock.deduct({ productId: shop, mode: "redis" }))).toBeNull();
    expect(await codeOf(admin.stock.deduct({ productId: shop, mode: "none" }))).toBeNull();
    expect(await t.redis.hget(`stock:{${shop}}`, "qty")).toBe("8");
  });

  it("caps the simulated work a client may ask for", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 10 });
    expect(await codeOf(t.caller.stock.deduct({ productId, mode: "redis", workMs: 5000 }))).toBe(
      "BAD_REQUEST",
    );
  });

  it("caps the work queued behind one product's lock: beyond it, TOO_MANY_REQUESTS at once", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 100 });
    // Eight clients each asking for 1 s of work under the lock would hold the product for 8 s.
    const ctx = await createContextInner({
      ...t.ctx,
      admission: new Admission({ maxWaiters: 100, maxQueuedWorkMs: 3_000 }),
    });
    const caller = createCaller(ctx);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        codeOf(caller.stock.deduct({ productId, mode: "redis", workMs: 1000 })),
      ),
    );
    expect(results.filter((c) => c === null)).toHaveLength(3);
    expect(results.filter((c) => c === "TOO_MANY_REQUESTS")).toHaveLength(5);
    // Once they settled, the product takes work again.
    expect(await codeOf(caller.stock.deduct({ productId, mode: "redis", workMs: 10 }))).toBeNull();
  });

  it("caps the deducts queued on one product", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 100 });
    const ctx = await createContextInner({
      ...t.ctx,
      admission: new Admission({ maxWaiters: 4, maxQueuedWorkMs: 60_000 }),
    });
    const caller = createCaller(ctx);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => codeOf(caller.stock.deduct({ productId, mode: "redis", workMs: 20 }))),
    );
    expect(results.filter((c) => c === "TOO_MANY_REQUESTS")).toHaveLength(6);
  });
});

describe("demo runs", () => {
  it("a burst only touches demo products, and needs the admin token when one is set", async () => {
    expect(await codeOf(t.caller.demo.burst.start({ productId: "shop-item-7", mode: "none" }))).toBe(
      "FORBIDDEN",
    );
    const stranger = await callerAs({}, { adminToken: "s3cret" });
    const before = await t.redis.hget("stock:{demo-guarded}", "qty");
    expect(await codeOf(stranger.demo.burst.start({ productId: "demo-guarded", mode: "none" }))).toBe(
      "UNAUTHORIZED",
    );
    expect(await codeOf(stranger.demo.scenario.start({ name: "reentrancy" }))).toBe("UNAUTHORIZED");
    expect(await t.redis.hget("stock:{demo-guarded}", "qty")).toBe(before);
  });

  it("scenarios are limited globally and per client", async () => {
    const a = await callerAs({ clientAddress: "10.0.0.1" });
    const b = await callerAs({ clientAddress: "10.0.0.2" });
    const c = await callerAs({ clientAddress: "10.0.0.3" });
    const first = await a.demo.scenario.start({ name: "reentrancy", timeScale: 0.5 });
    expect(await codeOf(a.demo.scenario.start({ name: "reentrancy", timeScale: 0.5 }))).toBe(
      "TOO_MANY_REQUESTS",
    );
    const second = await b.demo.scenario.start({ name: "reentrancy", timeScale: 0.5 });
    expect(await codeOf(c.demo.scenario.start({ name: "reentrancy", timeScale: 0.5 }))).toBe(
      "TOO_MANY_REQUESTS",
    );
    await watchAll(t.caller, first.runId);
    await watchAll(t.caller, second.runId);
    // Slots free when the runs end.
    const third = await c.demo.scenario.start({ name: "reentrancy", timeScale: 0.1 });
    expect((await watchAll(t.caller, third.runId)).at(-1)?.event.type).toBe("done");
  });

  it("a watcher resumes after its last event id, and another instance replays a finished run", async () => {
    const { runId } = await t.caller.demo.scenario.start({ name: "reentrancy", timeScale: 0.1 });
    const all = await watchAll(t.caller, runId);
    expect(all.map((e) => e.id)).toEqual(all.map((_, i) => String(i)));
    const resumed = await watchAll(t.caller, runId, "2");
    expect(resumed).toEqual(all.slice(3));
    // Another instance: its own run registry, the same Redis.
    const other = await testContext();
    try {
      expect(await watchAll(other.caller, runId)).toEqual(all);
    } finally {
      await other.close();
    }
    expect(await codeOf(watchAll(t.caller, "0123456789abcdef"))).toBe("NOT_FOUND");
  });
});

describe("system.info", () => {
  it("leaves versions and addresses out without the admin token", async () => {
    const stranger = await callerAs({}, { adminToken: "s3cret", redlockNodes: ["10.1.2.3:6380"] });
    const info = await stranger.system.info();
    expect(info).toMatchObject({ detailed: false, node: null, redis: { version: null } });
    expect(info.redlock.nodes).toEqual([]);
    expect(info.config.apiUrls).toEqual([]);
    expect(JSON.stringify(info)).not.toMatch(/10\.1\.2\.3|v\d+\.\d+\.\d+/);
    const admin = await callerAs(
      { adminToken: "s3cret" },
      { adminToken: "s3cret", redlockNodes: ["10.1.2.3:6380"] },
    );
    expect(await admin.system.info()).toMatchObject({
      detailed: true,
      redlock: { nodes: ["10.1.2.3:6380"] },
    });
  });
});
