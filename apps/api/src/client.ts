import {
  createTRPCClient,
  httpLink,
  httpSubscriptionLink,
  splitLink,
  type TRPCClient,
  type TRPCLink,
} from "@trpc/client";
import type { AnyTRPCRouter } from "@trpc/server";
import { EventSource } from "eventsource";

export interface ApiClientOptions {
  /** E.g. a pooled fetch (lib/agent-fetch.ts) that bounds the connections to each instance. */
  fetch?: typeof globalThis.fetch;
  headers?: Record<string, string>;
}

/**
 * The API side's one typed tRPC client, for the CLI, the burst and the tests. `httpLink`, not batching:
 * each call is its own HTTP request, so a burst is as concurrent as real shoppers; subscriptions over SSE.
 * Generic over the router so that code inside the API (the burst) can type it with the one router it calls
 * and never import root.ts, which stays the top of the import graph. Elsewhere: createApiClient<AppRouter>.
 */
export function createApiClient<R extends AnyTRPCRouter>(
  baseUrl: string,
  opts: ApiClientOptions = {},
): TRPCClient<R> {
  const url = `${baseUrl}/trpc`;
  // Built for any router (the API uses no transformer), then typed for R.
  const link = splitLink<AnyTRPCRouter>({
    condition: (op) => op.type === "subscription",
    true: httpSubscriptionLink({ url, EventSource }),
    false: httpLink({
      url,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
      ...(opts.headers ? { headers: opts.headers } : {}),
    }),
  });
  return createTRPCClient<R>({ links: [link as TRPCLink<R>] });
}
