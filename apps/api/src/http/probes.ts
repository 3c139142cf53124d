import type { IncomingMessage, ServerResponse } from "node:http";
import { plain } from "./headers.js";

/** The probe and scrape paths (server.ts): each answers GET, and HEAD as GET without the body. */
const PROBE_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz", "/metrics"]);
const ALLOW = "GET, HEAD";

export function isProbePath(url: string | undefined): boolean {
  return PROBE_PATHS.has((url ?? "/").split("?", 1)[0] ?? "");
}

/**
 * Answers 405 to any other method on a probe path, with an `Allow` naming exactly the two. Returns true when it
 * answered. The body is not read and the connection is closed: there is nothing to upload here.
 */
export function refuseProbeMethod(req: IncomingMessage, res: ServerResponse): boolean {
  const method = req.method ?? "GET";
  if (!isProbePath(req.url) || method === "GET" || method === "HEAD") return false;
  const path = (req.url ?? "/").split("?", 1)[0];
  plain(
    res,
    405,
    { message: `${path} answers ${ALLOW.replace(", ", " and ")} only, not ${method}` },
    { allow: ALLOW, connection: "close" },
  );
  return true;
}
