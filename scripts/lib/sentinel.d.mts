// Types of sentinel.mjs for the TypeScript tests that start a Sentinel group.
import type { ClusterServer } from "./cluster.mjs";

export interface SentinelGroup {
  /** The master name the Sentinels monitor (ioredis' `name`). */
  name: string;
  /** The Sentinels' addresses (ioredis' `sentinels`). */
  sentinels: { host: string; port: number }[];
  sentinelServers: ClusterServer[];
  primary: ClusterServer;
  replicas: ClusterServer[];
  /** The primary's address as the first Sentinel that answers gives it. */
  masterAddr(): Promise<{ host: string; port: number }>;
  /** A new replica of `primaryPort` (on `port`, e.g. a killed node's), resolved once in sync. */
  startReplica(port: number | undefined, primaryPort: number): Promise<ClusterServer>;
  stop(): Promise<void>;
}
export function startSentinelGroup(opts?: {
  name?: string;
  replicas?: number;
  sentinels?: number;
  quorum?: number;
  downAfterMs?: number;
  failoverTimeoutMs?: number;
  timeoutMs?: number;
}): Promise<SentinelGroup>;
