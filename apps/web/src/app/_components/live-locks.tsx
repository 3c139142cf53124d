"use client";

import type { RouterOutputs } from "@lockyard/api";
import type { ConnectionState } from "@lockyard/ui/connection-indicator";
import { useSubscription } from "@trpc/tanstack-react-query";
import { createContext, type ReactNode, useContext, useEffect, useRef, useState } from "react";
import { useEndpoints, useTRPC } from "~/trpc/react";

type Snapshot = RouterOutputs["locks"]["list"];
export type LockView = Snapshot["locks"][number];

export interface LiveLocks {
  locks: LockView[];
  /** `performance.now()` when the latest snapshot arrived. */
  receivedAt: number;
  /** Wall-clock time of the snapshot on the API. */
  at: number | null;
  instanceId: string | null;
  connection: ConnectionState;
  endpoint: string;
  error: unknown;
}

const LiveLocksContext = createContext<LiveLocks | null>(null);

export function useLiveLocks(): LiveLocks {
  const v = useContext(LiveLocksContext);
  if (!v) throw new Error("useLiveLocks() outside <LiveLocksProvider>");
  return v;
}

/** How long a connection may keep failing before we try the next API instance. */
const FAILOVER_AFTER_MS = 1500;

/**
 * One `locks.watch` stream for the whole page. EventSource reconnects by itself; when the current
 * instance keeps failing, the stream is restarted against the next URL.
 */
export function LiveLocksProvider({ children }: { children: ReactNode }) {
  const trpc = useTRPC();
  const endpoints = useEndpoints();
  const [endpoint, setEndpoint] = useState(endpoints.current());
  const [snap, setSnap] = useState<{ s: Snapshot; receivedAt: number } | null>(null);
  const sub = useSubscription(
    trpc.locks.watch.subscriptionOptions(
      { intervalMs: 200 },
      { onData: (s) => setSnap({ s: s as Snapshot, receivedAt: performance.now() }) },
    ),
  );
  const resetRef = useRef(sub.reset);
  resetRef.current = sub.reset;
  // The instance this stream was opened against, so a failure moves on from it and not from
  // whichever instance another request has already switched to.
  const streamUrlRef = useRef(endpoints.current());

  useEffect(() => endpoints.subscribe(setEndpoint), [endpoints]);

  const failing = sub.status === "error" || (sub.status === "connecting" && sub.error !== null);
  useEffect(() => {
    if (!failing) return;
    const t = setTimeout(() => {
      streamUrlRef.current = endpoints.failover(streamUrlRef.current);
      resetRef.current();
    }, FAILOVER_AFTER_MS);
    return () => clearTimeout(t);
  }, [failing, endpoints]);

  const connection: ConnectionState =
    sub.status === "pending" ? "connected" : sub.status === "connecting" ? "connecting" : "offline";

  const value: LiveLocks = {
    locks: snap?.s.locks ?? [],
    receivedAt: snap?.receivedAt ?? 0,
    at: snap?.s.at ?? null,
    instanceId: snap?.s.instanceId ?? null,
    connection,
    endpoint,
    error: failing ? sub.error : null,
  };
  return <LiveLocksContext.Provider value={value}>{children}</LiveLocksContext.Provider>;
}
