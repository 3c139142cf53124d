import type { ServerResponse } from "node:http";
import type { Redis } from "ioredis";

export type ReadyRequirement = "redlock" | "postgres";
type State = "up" | "down" | "not configured";

export interface ReadinessDeps {
  instanceId: string;
  redis: Redis;
  /** The Redlock nodes' clients; empty when REDLOCK_URLS is unset. */
  redlockClients: Redis[];
  postgresConfigured: boolean;
  /** Read per probe: the postgres mode turns on once its migration succeeds. */
  postgres: () => { pool: { query(sql: string): Promise<unknown> } } | null;
  /** Besides Redis, which must be up for the instance to be ready (READY_REQUIRES). */
  requires: readonly ReadyRequirement[];
  timeoutMs?: number;
}

/** Whether `p` settles successfully within `ms`. Never rejects; the timer is cleared. */
async function answers(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms).unref();
  });
  try {
    return await Promise.race([p.then(() => true), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Readiness: Redis answers PING; Redlock (a quorum of its nodes answers PING) and PostgreSQL (SELECT 1)
 * are reported when configured and count only when `requires` names them. States only, never error
 * messages: the probe is public.
 */
export async function readiness(deps: ReadinessDeps) {
  const ms = deps.timeoutMs ?? 1_000;
  const nodes = deps.redlockClients.length;
  const [redis, redlockUp, postgres] = await Promise.all([
    answers(deps.redis.ping(), ms).then((ok): State => (ok ? "up" : "down")),
    Promise.all(deps.redlockClients.map((c) => answers(c.ping(), ms))).then((r) => r.filter(Boolean).length),
    (async (): Promise<State> => {
      if (!deps.postgresConfigured) return "not configured";
      const mode = deps.postgres();
      return mode && (await answers(mode.pool.query("SELECT 1"), ms)) ? "up" : "down";
    })(),
  ]);
  const redlock: State =
    nodes === 0 ? "not configured" : redlockUp >= Math.floor(nodes / 2) + 1 ? "up" : "down";
  const checks = { redis, redlock, postgres };
  const ok = redis === "up" && deps.requires.every((r) => checks[r] === "up");
  return {
    ok,
    instanceId: deps.instanceId,
    checks,
    redlockNodesUp: nodes === 0 ? undefined : `${redlockUp}/${nodes}`,
    requires: ["redis", ...deps.requires],
  };
}

/** GET /readyz: 200 when ready, else 503, with the state of each dependency. */
export async function readyz(res: ServerResponse, deps: ReadinessDeps): Promise<void> {
  const body = await readiness(deps);
  res.writeHead(body.ok ? 200 : 503, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}
