import { QueryClient } from "@tanstack/react-query";

export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // Live data arrives through subscriptions; queries refetch on their own intervals.
        staleTime: 1000,
        retry: 1,
        refetchOnWindowFocus: false,
      },
    },
  });
}
