import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type Logger, pino } from "pino";
import { pinoHttp } from "pino-http";

export function createLogger(level: string, instanceId: string) {
  return pino({ level, base: { instance: instanceId } });
}

/** A client's own request id is kept when it is short and plain; anything else gets a fresh UUID. */
const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;
const PROBES = new Set(["/healthz", "/readyz", "/metrics"]);

// Internal errors of a request, recorded by tRPC's onError and written by the request's log line, so
// each is logged once, with the request id, and never sent to the client.
const failures = new WeakMap<IncomingMessage, unknown[]>();

/** Records an internal error of `req`; its request log line (level error) carries it. */
export function recordInternalError(req: IncomingMessage, err: unknown): void {
  const list = failures.get(req);
  if (list) list.push(err);
  else failures.set(req, [err]);
}

/**
 * pino-http: one line per finished request (method, path, status, time, request id), at info; 5xx at
 * warn; error when an internal error was recorded, with that error. Health probes and /metrics are not
 * logged. The request id comes from a plain `x-request-id` header or a new UUID, and is sent back in
 * `x-request-id`. Headers are not logged (they may carry the admin token).
 */
export function createHttpLogger(logger: Logger) {
  return pinoHttp({
    logger,
    quietReqLogger: true,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const given = req.headers["x-request-id"];
      const id = typeof given === "string" && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader("x-request-id", id);
      return id;
    },
    autoLogging: { ignore: (req) => PROBES.has((req.url ?? "/").split("?", 1)[0] ?? "") },
    serializers: {
      req: (req: { method?: string; url?: string; remoteAddress?: string }) => ({
        method: req.method,
        url: req.url,
        remoteAddress: req.remoteAddress,
      }),
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
    },
    customLogLevel(req, res, err) {
      if (err || failures.has(req)) return "error";
      return res.statusCode >= 500 ? "warn" : "info";
    },
    customErrorMessage: (req, res) =>
      failures.has(req) ? "request failed" : `request answered ${res.statusCode}`,
    // Replace pino-http's synthetic "failed with status code" error by the recorded one (or none).
    customErrorObject(req, _res, err, val) {
      const recorded = failures.get(req);
      const real = recorded?.[0] ?? (err.message.startsWith("failed with status code") ? undefined : err);
      const more = recorded?.slice(1).map((e) => pino.stdSerializers.err(e as Error));
      return { ...val, err: real, ...(more?.length && { moreErrors: more }) };
    },
  });
}
