import { readFileSync } from "node:fs";
import { stackFile } from "./paths";

/** What globalSetup started, written to e2e/.logs/stack.json and exported to the specs through env. */
export interface Stack {
  redisUrl: string;
  redisPort: number;
  /** Seed nodes of the Redis Cluster the APIs use (E2E_REDIS_TOPOLOGY=cluster), else empty. */
  redisClusterNodes: string[];
  redlockUrls: string[];
  databaseUrl: string;
  apiUrls: string[];
  /** The stand-in OTLP collector the APIs export traces to (otlp-sink.mjs). */
  otlpUrl: string;
  webUrl: string;
  /** A port already allowed by the APIs' CORS, for a spec that starts its own dashboard. */
  spareWebPort: number;
  pids: { name: string; pid: number }[];
  dirs: string[];
}

export function readStack(): Stack {
  return JSON.parse(readFileSync(stackFile, "utf8")) as Stack;
}
