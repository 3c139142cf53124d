import { TRPCError } from "@trpc/server";
import type { Context } from "../context.js";
import { isDemoProduct } from "../demo/products.js";
import type { StockMode } from "../schemas.js";
import { isAdmin } from "../trpc.js";

/** The demo modes that let stock oversell: no lock, or a lock one instance cannot see. */
const UNSAFE: ReadonlySet<StockMode> = new Set(["none", "local"]);

/**
 * An unsafe mode can sell what is not there. With ADMIN_TOKEN set (a deployment, not the local demo) any
 * client may still show it on a demo product, but only the admin may run it on another product.
 */
export function assertSafeForProduct(
  ctx: Pick<Context, "config" | "adminToken">,
  mode: StockMode,
  productId: string,
): void {
  if (!UNSAFE.has(mode) || isDemoProduct(ctx.config, productId) || isAdmin(ctx)) return;
  throw new TRPCError({
    code: "FORBIDDEN",
    message: `mode "${mode}" can oversell, so it runs only on demo products (DEMO_PRODUCTS, DEMO_PRODUCT_PREFIX) or with the admin token (x-admin-token header); use mode "redis", "redlock", "postgres" or "atomic" for "${productId}"`,
  });
}
