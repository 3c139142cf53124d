import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registry } from "prom-client";
import { sameSecret } from "../lib/same-secret.js";

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

/** Liveness: 200 whenever the process answers. It checks nothing else; readiness is /readyz (ready.ts). */
export function healthz(res: ServerResponse, instanceId: string): void {
  json(res, 200, { ok: true, instanceId, uptimeS: Math.round(process.uptime()) });
}

/**
 * Prometheus metrics. They include process and runtime details (Node version, memory), so when ADMIN_TOKEN
 * is set they need it, as `x-admin-token` or `authorization: Bearer` (scrapers support the latter).
 */
export async function metrics(
  req: IncomingMessage,
  res: ServerResponse,
  registry: Registry,
  adminToken: string | undefined,
): Promise<void> {
  if (adminToken !== undefined) {
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const given = req.headers["x-admin-token"];
    if (!sameSecret((Array.isArray(given) ? given[0] : given) ?? bearer, adminToken)) {
      return json(res, 401, { error: "admin token required (x-admin-token or Bearer)" });
    }
  }
  res.writeHead(200, { "content-type": registry.contentType });
  res.end(await registry.metrics());
}
