import type { IncomingMessage, ServerResponse } from "node:http";
import { type ClientLimits, streamCall } from "./client-limits.js";
import { errorBody, isRestPath } from "./error-body.js";
import { plain } from "./headers.js";
import { checkHost, type HostPolicy } from "./host.js";
import { isProbePath } from "./probes.js";

const METHODS = new Set(["GET", "POST", "OPTIONS"]);

export interface GuardOptions {
  host: HostPolicy;
  origins: ReadonlySet<string>;
  limits: ClientLimits;
  /** tRPC paths that are subscriptions (long-lived SSE streams), counted per client. */
  streamPaths: ReadonlySet<string>;
  /** Counts the other requests until their answer is written, for the shutdown (lib/drain.ts). */
  inFlight?: { enter(): () => void };
}

/**
 * Everything a request must pass before any route sees it. Returns true when it has been answered.
 * - Host: DNS rebinding (see host.ts).
 * - Methods: only GET, POST and OPTIONS (TRACE and friends get 405, not a 500 from deeper down). Under `/api/`
 *   rest.ts answers them, as it knows each route's methods (HEAD included, on a GET route); on the probe paths
 *   probes.ts does (GET and HEAD).
 * - POST from a foreign Origin (not the dashboard's, not the API's own): 403, whatever its content type. Browsers send Origin on every cross-origin
 *   POST; CORS alone only hides the answer, it does not stop a "simple" request from running.
 * - SSE streams per client address; every other request admitted is counted in flight until answered.
 * Errors under `/api/` are the seed's `{ message }` (error-body.ts).
 */
export function guardRequest(req: IncomingMessage, res: ServerResponse, opts: GuardOptions): boolean {
  const refuse = (status: number, message: string, headers?: Record<string, string>) =>
    plain(res, status, errorBody(req.url, message), headers);
  const host = checkHost(req, opts.host);
  if (!host.ok) {
    refuse(host.status, host.message, { connection: "close" });
    return true;
  }
  const method = req.method ?? "GET";
  if (!METHODS.has(method) && !isRestPath(req.url) && !isProbePath(req.url)) {
    refuse(405, `method ${method} not allowed`, { allow: "GET, POST, OPTIONS", connection: "close" });
    return true;
  }
  const origin = req.headers.origin;
  // The API's own pages (the docs' "Try it out") post with the API's own origin; the Host was checked above.
  const sameOrigin = origin !== undefined && origin === `http://${req.headers.host}`;
  // cors.ts refuses such a preflight in text/plain: under /api/ every error is the seed's { message }.
  if (method === "OPTIONS" && isRestPath(req.url) && !(origin !== undefined && opts.origins.has(origin))) {
    refuse(403, "OPTIONS is a CORS preflight, answered only for the dashboard's origins", {
      connection: "close",
    });
    return true;
  }
  if (method === "POST" && origin !== undefined && !sameOrigin && !opts.origins.has(origin)) {
    refuse(403, `origin ${origin} not allowed: POST from the dashboard's origins or the API's own`, {
      connection: "close",
    });
    return true;
  }
  const call = method === "GET" ? streamCall(req.url ?? "/", opts.streamPaths) : "other";
  if (call === "undecodable") {
    refuse(400, "the path is not valid percent-encoding (each % must start a %XX of UTF-8)");
    return true;
  }
  if (call === "stream") {
    const release = opts.limits.enterStream(req.socket.remoteAddress ?? "unknown");
    if (!release) {
      refuse(
        429,
        `too many open streams from your address (MAX_STREAMS_PER_CLIENT=${opts.limits.limits.streams})`,
      );
      return true;
    }
    res.once("close", release);
  } else if (opts.inFlight) {
    res.once("close", opts.inFlight.enter());
  }
  return false;
}
