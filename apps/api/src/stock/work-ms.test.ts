// With ADMIN_TOKEN set, an anonymous client's `workMs` on a product that is not a demo product held its lock (or
// its queue) from every buyer: 40 deducts of 1 s stalled it for 30 s. Refused like the modes that oversell.
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uid } from "../../test/context.js";
import { type RestServer, startRest } from "../../test/seed-rest-server.js";
import { createContextInner } from "../context.js";
import { createCaller } from "../root.js";

const TOKEN = "s3cret";
let rest: RestServer;
beforeAll(async () => {
  rest = await startRest({ config: { adminToken: TOKEN } });
});
afterAll(() => rest.close());

const callerAs = async (adminToken?: string) =>
  createCaller(await createContextInner(rest.ctx, adminToken ? { adminToken } : {}));

/** A product with `qty` units, reset with the admin token. */
async function product(prefix: string, qty: number): Promise<string> {
  const productId = uid(prefix);
  await (await callerAs(TOKEN)).stock.reset({ productId, qty });
  return productId;
}

async function errorOf(p: Promise<unknown>): Promise<TRPCError | null> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  return err instanceof TRPCError ? err : null;
}

describe("workMs on a product that is not a demo product, with ADMIN_TOKEN set", () => {
  it("stock.deduct refuses it with FORBIDDEN unless the admin token comes along; 0 and demo products run", async () => {
    const shop = await product("shop", 10);
    const demo = await product("demo-p", 10);
    const stranger = await callerAs();
    for (const mode of ["redis", "atomic"] as const) {
      const err = await errorOf(stranger.stock.deduct({ productId: shop, mode, workMs: 1 }));
      expect(err?.code).toBe("FORBIDDEN");
      expect(err?.message).toMatch(/workMs 1 holds product .* demo products .* admin token .* send workMs 0/);
    }
    expect(await rest.stock(shop)).toBe(10);
    expect(await errorOf(stranger.stock.deduct({ productId: shop, mode: "redis", workMs: 0 }))).toBeNull();
    expect(await errorOf(stranger.stock.deduct({ productId: demo, mode: "redis", workMs: 5 }))).toBeNull();
    const admin = await callerAs(TOKEN);
    expect(await errorOf(admin.stock.deduct({ productId: shop, mode: "redis", workMs: 5 }))).toBeNull();
    expect(await rest.stock(shop)).toBe(8);
  });

  it("POST /api/stock/deduct answers 403 with a { message } naming what to do; without workMs it sells", async () => {
    const shop = await product("shop", 10);
    const refused = await fetch(`${rest.url}/api/stock/deduct?productId=${shop}&workMs=1000`, {
      method: "POST",
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toMatch(/send workMs 0 or leave it out/);
    expect(await rest.stock(shop)).toBe(10);
    const sold = await fetch(`${rest.url}/api/stock/deduct?productId=${shop}`, { method: "POST" });
    expect(await sold.json()).toEqual({ success: true, remainingStock: 9 });
    const admin = await fetch(`${rest.url}/api/stock/deduct?productId=${shop}&workMs=5`, {
      method: "POST",
      headers: { "x-admin-token": TOKEN },
    });
    expect(await admin.json()).toEqual({ success: true, remainingStock: 8 });
  });
});
