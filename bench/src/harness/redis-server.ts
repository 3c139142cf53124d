import { repoPath } from "./repo.js";

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

interface RedisLib {
  startRedis(opts?: { args?: string[] }): Promise<RedisServer>;
}

/**
 * Starts the benchmark's own redis-server through the shared dependency-free helper (scripts/lib/redis.mjs),
 * which stops it by PID. The path is computed so tsc does not try to type the plain .mjs file.
 */
export async function startBenchRedis(): Promise<RedisServer> {
  const lib = (await import(repoPath("scripts/lib/redis.mjs"))) as RedisLib;
  // 10 000 watchdog locks plus 64 loops fit easily; keep Redis from persisting anything.
  return lib.startRedis({ args: ["--maxclients", "1000"] });
}
