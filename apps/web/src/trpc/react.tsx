"use client";

import type { AppRouter } from "@lockyard/api";
import { type QueryClient, QueryClientProvider } from "@tanstack/react-query";
import {
  createTRPCClient,
  httpBatchLink,
  httpBatchStreamLink,
  httpSubscriptionLink,
  splitLink,
  type TRPCClient,
} from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { createContext, type ReactNode, useContext, useState } from "react";
import { ApiEndpoints, failoverFetch } from "./endpoints";
import { makeQueryClient } from "./query-client";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

const EndpointsContext = createContext<ApiEndpoints | null>(null);

export function useEndpoints(): ApiEndpoints {
  const endpoints = useContext(EndpointsContext);
  if (!endpoints) throw new Error("useEndpoints() outside <TRPCReactProvider>");
  return endpoints;
}

let browserQueryClient: QueryClient | undefined;

function getQueryClient(): QueryClient {
  // A fresh client per server render, one for the whole life of the browser tab.
  if (typeof window === "undefined") return makeQueryClient();
  browserQueryClient ??= makeQueryClient();
  return browserQueryClient;
}

/**
 * The browser's one typed tRPC client factory: subscriptions over SSE to the current instance, the rest
 * batched to the first instance with failover to the others. The API refuses batches larger than its
 * MAX_BATCH_SIZE (default 10). `stream` uses the streaming batch link, whose HTTP status is 200 with each
 * outcome in the body.
 */
export function makeTrpcClient(
  endpoints: ApiEndpoints,
  batch: { maxItems: number; stream?: boolean } = { maxItems: 10 },
): TRPCClient<AppRouter> {
  const http = {
    url: `${endpoints.urls[0]}/trpc`,
    fetch: failoverFetch(endpoints),
    maxItems: batch.maxItems,
  };
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({ url: () => `${endpoints.current()}/trpc` }),
        false: batch.stream ? httpBatchStreamLink(http) : httpBatchLink(http),
      }),
    ],
  });
}

export function TRPCReactProvider({ apiUrls, children }: { apiUrls: string[]; children: ReactNode }) {
  const queryClient = getQueryClient();
  const [endpoints] = useState(() => new ApiEndpoints(apiUrls));
  const [trpcClient] = useState(() => makeTrpcClient(endpoints));
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <EndpointsContext.Provider value={endpoints}>{children}</EndpointsContext.Provider>
      </TRPCProvider>
    </QueryClientProvider>
  );
}
