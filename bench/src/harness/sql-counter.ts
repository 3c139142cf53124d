import type { Pool, PoolClient } from "pg";

type Counts = Map<string, number>;
const byPool = new Map<string, Counts>();

/** "lockyard.<table>.acquire" → "acquire"; plain text → its first word ("LISTEN", "TRUNCATE"). */
function statementName(arg: unknown): string {
  if (typeof arg === "string") return arg.trim().split(/\s+/)[0]?.toUpperCase() ?? "?";
  if (typeof arg === "object" && arg !== null) {
    const { name, text } = arg as { name?: unknown; text?: unknown };
    if (typeof name === "string") return name.slice(name.lastIndexOf(".") + 1);
    return statementName(text);
  }
  return "?";
}

/**
 * Counts every statement the pool's connections send, by name: the PostgreSQL counterpart of the ioredis
 * counter in connections.ts. Each statement is one round trip. Wrapping each client (not pool.query) sees
 * pool.query's statements and those sent on a checked-out client, such as the backend's LISTEN, once each.
 */
export function countStatements(pool: Pool, name: string): void {
  let counts = byPool.get(name);
  if (!counts) {
    counts = new Map();
    byPool.set(name, counts);
  }
  const c = counts;
  pool.on("connect", (client: PoolClient) => {
    const target = client as unknown as { query: (...args: unknown[]) => unknown };
    const original = target.query.bind(client);
    target.query = (...args: unknown[]) => {
      const stmt = statementName(args[0]);
      c.set(stmt, (c.get(stmt) ?? 0) + 1);
      return original(...args);
    };
  });
}

/** A copy of the per-statement counts of every pool whose name starts with `prefix`. */
export function sqlCalls(prefix: string): Counts {
  const out: Counts = new Map();
  for (const [name, counts] of byPool) {
    if (!name.startsWith(prefix)) continue;
    for (const [stmt, n] of counts) out.set(stmt, (out.get(stmt) ?? 0) + n);
  }
  return out;
}
