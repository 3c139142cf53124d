import type { IncomingMessage, ServerResponse } from "node:http";
import { context, propagation, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** Probes and scrapes: a span each would bury the requests people look for. */
const UNTRACED = new Set(["/healthz", "/readyz", "/metrics"]);
/** Paths that name what ran (a procedure, a REST operation); anything else is named by its method alone. */
const NAMED = ["/trpc/", "/api/"];

/**
 * Runs each request inside an HTTP server span that continues the caller's W3C trace (`traceparent`), so the
 * `lock.acquire` and `lock.hold` spans of @lockyard/lock/otel become its children: one trace shows the request,
 * how long it waited for which lock, and how long it held it. Without a tracer the route runs as it was.
 */
export function traced(tracer: Tracer | undefined, route: Route): Route {
  if (!tracer) return route;
  return (req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0] ?? "/";
    if (UNTRACED.has(path)) return route(req, res);
    const method = req.method ?? "GET";
    const named = NAMED.some((p) => path.startsWith(p));
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(
      named ? `${method} ${path}` : method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": method,
          "url.path": path,
          ...(req.headers["user-agent"] && { "user_agent.original": req.headers["user-agent"] }),
        },
      },
      parent,
    );
    res.once("close", () => {
      span.setAttribute("http.response.status_code", res.statusCode);
      // A route nobody serves would give the span an unbounded set of names: say only the method.
      if (res.statusCode === 404 && named) span.updateName(method);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      if (!res.writableFinished) span.setAttribute("http.aborted", true);
      span.end();
    });
    context.with(trace.setSpan(parent, span), () => route(req, res));
  };
}
