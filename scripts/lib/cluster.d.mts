// Types of cluster.mjs for the TypeScript tests that start a Cluster.
export interface ClusterServer {
  port: number;
  /** The node's data directory (a temp dir unless startCluster was given `dir`). */
  dir: string;
  readonly pid: number | undefined;
  kill(signal?: NodeJS.Signals): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}
export interface StartedCluster {
  nodes: { host: string; port: number }[];
  servers: ClusterServer[];
  stop(): Promise<void>;
}
export function startCluster(opts?: {
  masters?: number;
  replicas?: number;
  nodeTimeoutMs?: number;
  timeoutMs?: number;
  ports?: number[];
  dir?: string;
}): Promise<StartedCluster>;
export function clusterRoles(ports: number[]): Promise<{
  masters: number[];
  replicas: { port: number; master: number }[];
}>;
export function redisCliBin(): string;
