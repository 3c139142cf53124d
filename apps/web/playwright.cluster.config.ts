import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

/**
 * The flash-sale (every mode) and orders specs a second time, against a Redis Cluster of 3 masters with one
 * replica each: globalSetup reads E2E_REDIS_TOPOLOGY=cluster (set by `npm run e2e:cluster`).
 */
export default defineConfig({
  ...base,
  testMatch: ["**/flash-sale.spec.ts", "**/orders.spec.ts"],
});
