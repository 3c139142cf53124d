import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import { isDemoProduct } from "../demo/products.js";
import type { StockMode } from "../schemas.js";
import { isAdmin } from "../trpc.js";

/** The demo modes that let stock oversell: no lock, or a lock one instance cannot see. */
const UNSAFE: ReadonlySet<StockMode> = new Set(["none", "local"]);

/**
 * An unsafe mode can sell what is not there, and `workMs` holds the product's lock (or its queue) from every
 * other buyer: 40 deducts of 1 s stall it for 30 s. With ADMIN_TOKEN set (a deployment, not the local demo) any
 * client may still show them on a demo product, but only the admin may ask for them on another product.
 */
export function assertSafeForProduct(
  ctx: Pick<Context, "config" | "adminToken">,
  req: { mode: StockMode; productId: string; workMs: number },
): void {
  const { mode, productId, workMs } = req;
  if (isDemoProduct(ctx.config, productId) || isAdmin(ctx)) return;
  if (UNSAFE.has(mode)) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `mode "${mode}" can oversell, so it runs only on demo products (DEMO_PRODUCTS, DEMO_PRODUCT_PREFIX) or with the admin token (x-admin-token header); use mode "redis", "redlock", "postgres" or "atomic" for "${productId}"`,
    });
  }
  if (workMs > 0) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `workMs ${workMs} holds product "${productId}" from every other buyer, so simulated work runs only on demo products (DEMO_PRODUCTS, DEMO_PRODUCT_PREFIX) or with the admin token (x-admin-token header); send workMs 0 or leave it out`,
    });
  }
}
