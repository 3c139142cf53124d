import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext, uid } from "../../test/context.js";
import { stockResource } from "../stock/keys.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext();
});
afterAll(() => t.close());

async function codeOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TRPCError);
  return (err as TRPCError).code;
}

describe("stock", () => {
  it("reads, resets and reports a missing product as empty", async () => {
    const productId = uid("p");
    expect(await t.caller.stock.get({ productId })).toEqual({ productId, qty: 0, fence: 0, exists: false });
    expect(await t.caller.stock.reset({ productId, qty: 7 })).toMatchObject({ qty: 7, exists: true });
    expect((await t.caller.stock.get({ productId })).qty).toBe(7);
  });

  it("atomic mode never oversells and returns the stock after each write", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 20 });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => t.caller.stock.deduct({ productId, mode: "atomic" })),
    );
    const ok = results.filter((r) => r.ok);
    expect(ok).toHaveLength(20);
    expect(results.filter((r) => !r.ok && r.reason === "sold-out")).toHaveLength(30);
    expect(new Set(ok.map((r) => r.stock))).toEqual(new Set(Array.from({ length: 20 }, (_, i) => i)));
    expect((await t.caller.stock.get({ productId })).qty).toBe(0);
  });

  it("none mode oversells under concurrency (the race the locks prevent)", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 5 });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => t.caller.stock.deduct({ productId, mode: "none", workMs: 30 })),
    );
    expect(results.filter((r) => r.ok).length).toBeGreaterThan(5);
    expect((await t.caller.stock.get({ productId })).qty).toBeLessThan(0);
  });

  it("redis mode serialises holders (no overlapping holds), never oversells and advances the fence", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 10 });
    const since = t.events.length;
    const results = await Promise.all(
      Array.from({ length: 25 }, () => t.caller.stock.deduct({ productId, mode: "redis", workMs: 5 })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    expect(results.filter((r) => !r.ok && r.reason === "sold-out")).toHaveLength(15);
    const stock = await t.caller.stock.get({ productId });
    expect(stock.qty).toBe(0);
    const resource = stockResource(productId);
    const evs = t.events.slice(since).filter((e) => e.resource === resource);
    // Every holder's read registers its token (sold-out ones too), so the fence is the last holder's token.
    const tokens = evs.flatMap((e) => (e.type === "acquired" && e.token !== null ? [e.token] : []));
    expect(tokens).toHaveLength(25);
    expect(stock.fence).toBe(Math.max(...tokens));
    const starts = new Map<string, number>();
    const holds: { owner: string; start: number; end: number }[] = [];
    for (const e of evs) {
      if (e.type === "acquired") starts.set(e.owner, e.at);
      if (e.type === "released") holds.push({ owner: e.owner, start: starts.get(e.owner)!, end: e.at });
    }
    expect(holds).toHaveLength(25);
    holds.sort((a, b) => a.start - b.start);
    for (let i = 1; i < holds.length; i++) {
      expect(holds[i]!.start).toBeGreaterThanOrEqual(holds[i - 1]!.end);
    }
  });

  it("local mode serialises within one instance", async () => {
    const productId = uid("p");
    await t.caller.stock.reset({ productId, qty: 5 });
    const results = await Promise.all(
      Array.from({ length: 12 }, () => t.caller.stock.deduct({ productId, mode: "local", workMs: 5 })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(5);
    expect((await t.caller.stock.get({ productId })).qty).toBe(0);
    expect(t.ctx.localMutex.size).toBe(0);
  });

  it("rejects redlock with a clear error while it is unavailable", async () => {
    const productId = uid("p");
    const err = await t.caller.stock.deduct({ productId, mode: "redlock" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCError);
    expect((err as TRPCError).code).toBe("PRECONDITION_FAILED");
    expect((err as TRPCError).message).toMatch(/redlock/);
    const info = await t.caller.system.info();
    expect(info.modes.find((m) => m.mode === "redlock")).toMatchObject({ available: false });
    expect(info.redlock.reason).toBeTruthy();
  });

  it("rejects bad input with BAD_REQUEST before touching Redis", async () => {
    const bad: unknown[] = [
      { productId: "a b", mode: "none" },
      { productId: "x{1}", mode: "none" },
      { productId: "p".repeat(65), mode: "none" },
      { productId: "p", mode: "nope" },
      { productId: "p", mode: "none", quantity: Number.NaN },
      { productId: "p", mode: "none", quantity: -1 },
      { productId: "p", mode: "none", quantity: 1e12 },
      { productId: "p", mode: "none", workMs: 1e9 },
      { productId: "p", mode: "none", owner: "someone" },
    ];
    for (const input of bad) {
      // biome-ignore lint/suspicious/noExplicitAny: deliberately ill-typed input
      expect(await codeOf(t.caller.stock.deduct(input as any))).toBe("BAD_REQUEST");
    }
  });

  it("guards reset with the admin token when one is configured", async () => {
    const productId = uid("p");
    const { createContextInner } = await import("../context.js");
    const { createCaller } = await import("../root.js");
    const { testServices } = await import("../../test/services.js");
    const services = testServices({ redis: t.redis, locks: t.locks, config: { adminToken: "s3cret" } });
    const anon = createCaller(await createContextInner(services));
    const wrong = createCaller(await createContextInner(services, { adminToken: "nope" }));
    const admin = createCaller(await createContextInner(services, { adminToken: "s3cret" }));
    expect(await codeOf(anon.stock.reset({ productId, qty: 1 }))).toBe("UNAUTHORIZED");
    expect(await codeOf(wrong.stock.reset({ productId, qty: 1 }))).toBe("UNAUTHORIZED");
    expect(await admin.stock.reset({ productId, qty: 1 })).toMatchObject({ qty: 1 });
  });
});
