"use client";

import { useEffect, useEffectEvent } from "react";
import { ApiEndpoints } from "~/trpc/endpoints";
import { makeTrpcClient } from "~/trpc/react";

/** How often an instance the page failed over from is asked whether it is back. */
const RECHECK_MS = 3000;

/**
 * Calls `onAnswer` once the API instance at `url` answers a request again (null: nothing to watch).
 * The live stream stays where it is; this only tells the page that the failover is over.
 */
export function useAnswersAgain(url: string | null, onAnswer: () => void): void {
  const answered = useEffectEvent(onAnswer);
  useEffect(() => {
    if (url === null) return;
    const client = makeTrpcClient(new ApiEndpoints([url]), { maxItems: 1 });
    let stopped = false;
    const check = async () => {
      try {
        await client.system.info.query();
        if (!stopped) answered();
      } catch {
        // Still unreachable: the next check tries again.
      }
    };
    const timer = setInterval(check, RECHECK_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [url]);
}
