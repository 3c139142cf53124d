import type { IncomingMessage, ServerResponse } from "node:http";

const ALLOWED_HEADERS = "content-type, authorization, x-admin-token, trpc-accept, last-event-id";

/**
 * CORS for the dashboard's origins only. Returns true when the request was a preflight and has
 * been answered.
 */
export function applyCors(req: IncomingMessage, res: ServerResponse, origins: ReadonlySet<string>): boolean {
  const origin = req.headers.origin;
  const allowed = origin !== undefined && origins.has(origin);
  if (allowed) {
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("access-control-allow-credentials", "true");
  }
  res.setHeader("vary", "origin");
  if (req.method !== "OPTIONS") return false;
  if (!allowed) {
    res.writeHead(403, { "content-type": "text/plain" }).end("origin not allowed");
    return true;
  }
  res.writeHead(204, {
    "access-control-allow-methods": "GET, POST, OPTIONS",
    "access-control-allow-headers": ALLOWED_HEADERS,
    "access-control-max-age": "600",
  });
  res.end();
  return true;
}
