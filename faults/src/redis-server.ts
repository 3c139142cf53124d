// @ts-expect-error plain .mjs helper without types
import { rawCommand as raw, startRedis as start } from "../../scripts/lib/redis.mjs";

export interface RedisServer {
  url: string;
  port: number;
  dir: string;
  readonly pid: number;
  kill(signal?: NodeJS.Signals): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** A real redis-server child process on a free loopback port (scripts/lib/redis.mjs). */
export function startRedis(opts: { args?: string[]; port?: number } = {}): Promise<RedisServer> {
  return start(opts);
}

/** One inline command over a raw socket; the first reply line. */
export function rawCommand(port: number, line: string, timeoutMs = 1000): Promise<string> {
  return raw(port, line, { timeoutMs });
}
