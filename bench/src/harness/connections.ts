import { Redis } from "ioredis";

/** Housekeeping a connection sends for itself (handshake, ready check, keepalive): never a lock call. */
const HOUSEKEEPING = new Set([
  "hello",
  "client",
  "select",
  "info",
  "auth",
  "ping",
  "quit",
  "config",
  "flushall",
]);

type Counts = Map<string, number>;
const byConnection = new Map<string, Counts>();
const seen = new WeakSet<object>();
let installed = false;

/**
 * Counts every command each named connection writes, on the client side. Redis 7's INFO commandstats also
 * counts the commands a Lua script runs, so it cannot tell a round-trip from a script's inner HSET; this can.
 * Connections are told apart by `connectionName`, which ioredis copies into duplicate()d connections too
 * (so a library's own subscriber connection is attributed to it). The WeakSet keeps a command that waited in
 * the offline queue and was sent again from being counted twice.
 */
export function installCommandCounter(): void {
  if (installed) return;
  installed = true;
  const proto = Redis.prototype as unknown as {
    sendCommand(this: Redis, command: { name: string }, stream?: unknown): unknown;
  };
  const original = proto.sendCommand;
  proto.sendCommand = function (this: Redis, command, stream) {
    if (!seen.has(command)) {
      seen.add(command);
      const conn = this.options.connectionName ?? "unnamed";
      let counts = byConnection.get(conn);
      if (!counts) {
        counts = new Map();
        byConnection.set(conn, counts);
      }
      counts.set(command.name, (counts.get(command.name) ?? 0) + 1);
    }
    return original.call(this, command, stream);
  };
}

/** A copy of the per-command counts of every connection whose name starts with `prefix`. */
export function clientCalls(prefix: string): Counts {
  const out: Counts = new Map();
  for (const [conn, counts] of byConnection) {
    if (!conn.startsWith(prefix)) continue;
    for (const [cmd, n] of counts) out.set(cmd, (out.get(cmd) ?? 0) + n);
  }
  return out;
}

/** after − before, without housekeeping commands. */
export function callsDelta(
  before: Counts,
  after: Counts,
): { total: number; byCommand: Record<string, number> } {
  const byCommand: Record<string, number> = {};
  let total = 0;
  for (const [cmd, n] of after) {
    if (HOUSEKEEPING.has(cmd)) continue;
    const d = n - (before.get(cmd) ?? 0);
    if (d > 0) {
      byCommand[cmd] = d;
      total += d;
    }
  }
  return { total, byCommand };
}

export const isHousekeeping = (cmd: string): boolean => HOUSEKEEPING.has(cmd.split("|")[0]!);

/** A new connection named `name`, connected and ready before it is handed out. */
export async function connect(url: string, name: string): Promise<Redis> {
  const redis = new Redis(url, { connectionName: name, lazyConnect: true, maxRetriesPerRequest: 2 });
  await redis.connect();
  return redis;
}
