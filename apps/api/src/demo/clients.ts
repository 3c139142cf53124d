import { createTRPCClient, httpLink, type TRPCClient } from "@trpc/client";
import type { AppRouter } from "../root.js";

export type ApiClient = TRPCClient<AppRouter>;

/**
 * One typed client per API instance. `httpLink`, not batching: each deduct is its own HTTP request,
 * so the burst is as concurrent as real shoppers.
 */
export function apiClients(baseUrls: readonly string[]): ApiClient[] {
  return baseUrls.map((base) => createTRPCClient<AppRouter>({ links: [httpLink({ url: `${base}/trpc` })] }));
}
