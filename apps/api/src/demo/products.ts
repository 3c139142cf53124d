import { TRPCError } from "@trpc/server";
import type { Config } from "../context.js";

/** Demo runs reset and drain stock, so they only ever touch the configured demo products. */
export function isDemoProduct(config: Pick<Config, "demoProducts">, productId: string): boolean {
  const { ids, prefix } = config.demoProducts;
  return ids.includes(productId) || (prefix.length > 0 && productId.startsWith(prefix));
}

export function assertDemoProduct(config: Pick<Config, "demoProducts">, productId: string): void {
  if (isDemoProduct(config, productId)) return;
  const { ids, prefix } = config.demoProducts;
  throw new TRPCError({
    code: "FORBIDDEN",
    message: `demo runs only touch demo products (${[...ids, prefix ? `${prefix}*` : ""].filter(Boolean).join(", ")}); "${productId}" is not one (DEMO_PRODUCTS, DEMO_PRODUCT_PREFIX)`,
  });
}
