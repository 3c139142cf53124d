"use client";

import type { RunEvent } from "@lockyard/api";
import type { Unsubscribable } from "@trpc/server/observable";
import { useEffect, useRef } from "react";
import { useEndpoints, useTRPCClient } from "~/trpc/react";

export interface RunHandlers {
  onEvent: (event: RunEvent) => void;
  onError: (err: unknown) => void;
}

const isTerminal = (e: RunEvent) => e.type === "report" || e.type === "done" || e.type === "failed";

/**
 * Watches a demo run (`demo.runs.watch`). Its events are tracked, so when the connection drops the link
 * reconnects with the last event id and the run carries on where it was: watching never starts anything.
 * A connection error moves to the next API instance, which serves the same run from Redis.
 */
export function useRunWatch() {
  const client = useTRPCClient();
  const endpoints = useEndpoints();
  const current = useRef<Unsubscribable | null>(null);
  useEffect(() => () => current.current?.unsubscribe(), []);

  return function watch(runId: string, handlers: RunHandlers) {
    current.current?.unsubscribe();
    let finished = false;
    const sub = client.demo.runs.watch.subscribe(
      { runId },
      {
        onData: ({ data }) => {
          if (finished) return;
          handlers.onEvent(data);
          if (isTerminal(data)) {
            finished = true;
            sub.unsubscribe();
          }
        },
        onError: (err) => {
          if (finished) return;
          finished = true;
          sub.unsubscribe();
          handlers.onError(err);
        },
        onConnectionStateChange: (s) => {
          if (!finished && s.state === "connecting" && s.error) endpoints.failover(endpoints.current());
        },
      },
    );
    current.current = sub;
    return { cancel: () => sub.unsubscribe() };
  };
}
