import { lockKey } from "@lockyard/lock";

/*
 * A product's keys share one hash tag, `{<productId>}` (the library's README, Keys), so one Cluster slot
 * holds its lock, fence counter and release channel, its stock hash and the unsafe modes' barrier: the guarded
 * write runs in the release's batch, the read in the acquire's, and the barrier script reads the stock, which
 * a Cluster allows only within one slot.
 *
 * The library's tag is the whole encoded resource name (`lock:{<resource>}`), so the product's lock is named
 * by its bare id: resource `1001` → `lock:{1001}`, `fence:{1001}`, `stock:{1001}`. Ids are 1-64 of
 * [A-Za-z0-9_-] (schemas.ts), which the library writes unchanged, and hold no `:`; every other resource the API
 * locks does (`order:submit:<id>`, `job:cleanup`, the scenarios'), so no other lock can take a product's name.
 */
export const stockResource = (productId: string) => productId;
/** `{<productId>}`: the product's hash tag, taken from the library's own key builder so the two never drift. */
export const productTag = (productId: string) =>
  lockKey("lock:", stockResource(productId)).slice("lock:".length);
export const stockKey = (productId: string) => `stock:${productTag(productId)}`;
/** The start barrier of an unsafe burst on one product (see barrier.ts): read with the stock in one script. */
export const barrierKey = (productId: string) => `demo:barrier:${productTag(productId)}`;
/** SCAN pattern of every product's stock hash. */
export const STOCK_PATTERN = "stock:{*}";
