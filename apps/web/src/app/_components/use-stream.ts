"use client";

import type { Unsubscribable } from "@trpc/server/observable";
import { useEffect, useRef } from "react";
import type { ApiEndpoints } from "~/trpc/endpoints";

export interface StreamHandlers<T> {
  onStarted?: () => void;
  onData: (data: T) => void;
  onError: (err: unknown) => void;
  onComplete: () => void;
  onConnectionStateChange?: (state: { state: string; error: unknown }) => void;
}

export type Subscribe<T> = (handlers: StreamHandlers<T>) => Unsubscribable;

const CONNECT_FAILURE = new Error(
  "Lost the connection to the API during the run. It may still finish on the server; its locks expire on their own.",
);

/**
 * Runs a one-shot subscription (a burst, a scenario). Before it starts, a connection failure moves on
 * to the next API instance. Once it has started, a dropped connection ends the run with an error
 * instead of letting EventSource reconnect, which would start the same run a second time.
 */
export function useOneShotStream() {
  const current = useRef<Unsubscribable | null>(null);
  useEffect(() => () => current.current?.unsubscribe(), []);

  return function run<T>(endpoints: ApiEndpoints, subscribe: Subscribe<T>, handlers: StreamHandlers<T>) {
    current.current?.unsubscribe();
    let attempts = 0;
    let started = false;
    let finished = false;
    const finish = () => {
      finished = true;
      current.current?.unsubscribe();
      current.current = null;
    };
    const attempt = () => {
      const url = endpoints.current();
      attempts += 1;
      current.current = subscribe({
        onStarted: () => {
          started = true;
          handlers.onStarted?.();
        },
        onData: (d) => {
          if (!finished) handlers.onData(d);
        },
        onError: (err) => {
          if (finished) return;
          finish();
          handlers.onError(err);
        },
        onComplete: () => {
          if (finished) return;
          finished = true;
          current.current = null;
          handlers.onComplete();
        },
        onConnectionStateChange: (s) => {
          if (finished || s.state !== "connecting" || !s.error) return;
          if (started) {
            finish();
            handlers.onError(CONNECT_FAILURE);
          } else if (attempts < endpoints.urls.length) {
            current.current?.unsubscribe();
            endpoints.failover(url);
            attempt();
          } else {
            finish();
            handlers.onError(s.error);
          }
        },
      });
    };
    attempt();
    return { cancel: finish };
  };
}
