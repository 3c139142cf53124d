"use client";

import type { ConnectionState } from "@lockyard/ui/connection-indicator";
import { useSubscription } from "@trpc/tanstack-react-query";
import {
  createContext,
  type ReactNode,
  useContext,
  useEffect,
  useEffectEvent,
  useMemo,
  useRef,
  useState,
} from "react";
import {
  EMPTY_LOCK_STATE,
  type LiveLock,
  type LockState,
  reduceLocks,
  type WatchEvent,
} from "~/lib/lock-state";
import { useEndpoints, useTRPC } from "~/trpc/react";
import { useAnswersAgain } from "./use-answers-again";

export type { LiveLock, LockView } from "~/lib/lock-state";

export interface LiveConnection {
  state: ConnectionState;
  /** The API the live stream is opened against (not whichever one the last ordinary request used). */
  streamUrl: string;
  /** The instance that answered the stream, once it has. */
  instanceId: string | null;
  /** A failover in words: "api-a unreachable, using api-b". */
  note: string | null;
}

export interface LiveLocks {
  locks: readonly LiveLock[];
  connection: ConnectionState;
}

const LocksContext = createContext<LiveLocks | null>(null);
const ConnectionContext = createContext<LiveConnection | null>(null);

export function useLiveLocks(): LiveLocks {
  const v = useContext(LocksContext);
  if (!v) throw new Error("useLiveLocks() outside <LiveLocksProvider>");
  return v;
}

export function useLiveConnection(): LiveConnection {
  const v = useContext(ConnectionContext);
  if (!v) throw new Error("useLiveConnection() outside <LiveLocksProvider>");
  return v;
}

/** How long a connection may keep failing before we try the next API instance. */
const FAILOVER_AFTER_MS = 1500;

/** Events may arrive wrapped by `tracked()` as `{ id, data }`. */
function unwrap(raw: unknown): WatchEvent | null {
  if (typeof raw !== "object" || raw === null) return null;
  const r = raw as Record<string, unknown>;
  if (!("at" in r) && "data" in r && typeof r.data === "object") return r.data as WatchEvent;
  return raw as WatchEvent;
}

const host = (url: string) => url.replace(/^https?:\/\//, "");

/**
 * One `locks.watch` stream for the whole page: a snapshot, then deltas, folded by `reduceLocks`.
 * EventSource reconnects by itself; when the current instance keeps failing, the stream is restarted
 * against the next URL. After every URL failed in a row, the page is offline (and keeps trying).
 */
export function LiveLocksProvider({ children }: { children: ReactNode }) {
  const trpc = useTRPC();
  const endpoints = useEndpoints();
  const [state, setState] = useState<LockState>(EMPTY_LOCK_STATE);
  // The instance this stream was opened against, so a failure moves on from it and not from
  // whichever instance another request has already switched to.
  const [streamUrl, setStreamUrl] = useState(endpoints.current());
  const streamUrlRef = useRef(streamUrl);
  /** The instance that sent this stream's latest snapshot; null until the (re)opened stream sends one. */
  const [streamInstance, setStreamInstance] = useState<string | null>(null);
  const instances = useRef(new Map<string, string>());
  const sub = useSubscription(
    trpc.locks.watch.subscriptionOptions(
      { intervalMs: 200 },
      {
        onData: (raw) => {
          const event = unwrap(raw);
          if (!event) return;
          if ("instanceId" in event && event.kind !== "delta") {
            instances.current.set(streamUrlRef.current, event.instanceId);
            setStreamInstance(event.instanceId);
          }
          setState((s) => reduceLocks(s, event, performance.now()));
        },
      },
    ),
  );
  const reset = useEffectEvent(() => sub.reset());
  const [failures, setFailures] = useState(0);
  const [everConnected, setEverConnected] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  /** The instance the note says is unreachable: once it answers again, the note is over. */
  const [unreachableUrl, setUnreachableUrl] = useState<string | null>(null);
  useAnswersAgain(unreachableUrl, () => {
    setNote(null);
    setUnreachableUrl(null);
  });
  const lastConnected = useRef<string | null>(null);

  const connected = sub.status === "pending" && streamInstance !== null;
  const failing = sub.status === "error" || (sub.status === "connecting" && sub.error !== null);

  useEffect(() => {
    if (!failing) return;
    const t = setTimeout(() => {
      const next = endpoints.failover(streamUrlRef.current);
      streamUrlRef.current = next;
      setStreamUrl(next);
      setStreamInstance(null);
      setFailures((n) => n + 1);
      reset();
    }, FAILOVER_AFTER_MS);
    return () => clearTimeout(t);
  }, [failing, endpoints]);

  useEffect(() => {
    if (!connected) return;
    setEverConnected(true);
    setFailures(0);
    const prev = lastConnected.current;
    lastConnected.current = streamUrl;
    if (prev !== null && prev !== streamUrl) {
      const name = (url: string) => instances.current.get(url) ?? host(url);
      setNote(`${name(prev)} unreachable, using ${name(streamUrl)}`);
      setUnreachableUrl(prev);
    }
  }, [connected, streamUrl]);

  const connection: ConnectionState = connected
    ? "connected"
    : failures >= endpoints.urls.length
      ? "offline"
      : everConnected
        ? "reconnecting"
        : "connecting";

  const locks = useMemo(() => [...state.locks.values()], [state.locks]);
  const locksValue = useMemo(() => ({ locks, connection }), [locks, connection]);
  const connectionValue = useMemo(
    // The failover note holds while the stream is up on the other instance; offline, it is moot.
    () => ({
      state: connection,
      streamUrl,
      instanceId: streamInstance,
      note: connection === "connected" ? note : null,
    }),
    [connection, streamUrl, streamInstance, note],
  );
  return (
    <ConnectionContext.Provider value={connectionValue}>
      <LocksContext.Provider value={locksValue}>{children}</LocksContext.Provider>
    </ConnectionContext.Provider>
  );
}
