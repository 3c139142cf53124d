import { Redis, type RedisOptions } from "ioredis";
// @ts-expect-error plain .mjs helper without types
import { startRedis as startRedisUntyped } from "../../../scripts/lib/redis.mjs";

export interface RedisServer {
  port: number;
  url: string;
  readonly pid: number;
  kill(signal?: string): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** A real redis-server child process on a free loopback port (scripts/lib/redis.mjs), stopped by PID. */
export const startRedis = startRedisUntyped as (opts?: {
  port?: number;
  args?: string[];
}) => Promise<RedisServer>;

/**
 * What a Redlock node's client needs: a dead node must answer with an error at once (no offline queue,
 * one retry) rather than hold up the quorum; it reconnects in the background.
 */
export const failFast = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 500,
  retryStrategy: (attempt: number) => Math.min(20 * attempt, 200),
} satisfies RedisOptions;

export function nodeClient(server: RedisServer): Redis {
  const c = new Redis(server.url, failFast);
  c.on("error", () => {});
  return c;
}

/** Resolves once the client is connected again (after a node restart), or throws after timeoutMs. */
export async function ready(client: Redis, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (client.status !== "ready") {
    if (performance.now() > deadline)
      throw new Error(`client not ready after ${timeoutMs} ms: ${client.status}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface Nodes {
  servers: RedisServer[];
  clients: Redis[];
  /** Starts every killed node again (empty: no persistence) and waits for its client. */
  reviveAll(): Promise<void>;
  close(): Promise<void>;
}

export async function startNodes(n: number): Promise<Nodes> {
  const servers = await Promise.all(Array.from({ length: n }, () => startRedis()));
  const clients = servers.map(nodeClient);
  await Promise.all(clients.map((c) => ready(c)));
  return {
    servers,
    clients,
    async reviveAll() {
      for (const [i, s] of servers.entries()) {
        if (alive(s.pid)) await s.kill("SIGCONT");
        else await s.restart();
        await ready(clients[i]!);
      }
    },
    async close() {
      for (const c of clients) c.disconnect();
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Lock keys (`lock:*`) of one resource on a node. */
export async function lockKeysOn(client: Redis, resource: string): Promise<Record<string, string>> {
  return client.hgetall(`lock:{${resource}}`);
}
