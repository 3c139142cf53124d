import { createServer } from "node:http";

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
};
interface KeyValue {
  key: string;
  value: AnyValue;
}
export interface ExportedSpan {
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  /** Hex, as OTLP/JSON sends them; parentSpanId "" (or absent) for a root. */
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  /** The resource's attributes (service.name…) of the batch the span came in. */
  resource: Record<string, unknown>;
}

const attrs = (list: KeyValue[] = []): Record<string, unknown> =>
  Object.fromEntries(
    list.map(({ key, value: v }) => [
      key,
      v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue)),
    ]),
  );

/** A stand-in OTLP/HTTP collector: keeps every JSON trace and metric export it is sent. */
export async function startCollector() {
  const spans: ExportedSpan[] = [];
  const metricNames = new Set<string>();
  const contentTypes = new Set<string>();
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      contentTypes.add(String(req.headers["content-type"]));
      const data = JSON.parse(body);
      if (req.url === "/v1/traces") {
        for (const rs of data.resourceSpans ?? []) {
          const resource = attrs(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                name: s.name,
                kind: s.kind,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? "",
                attributes: attrs(s.attributes),
                events: (s.events ?? []).map((e: { name: string; attributes?: KeyValue[] }) => ({
                  name: e.name,
                  attributes: attrs(e.attributes),
                })),
                resource,
              });
            }
          }
        }
      } else if (req.url === "/v1/metrics") {
        for (const rm of data.resourceMetrics ?? [])
          for (const sm of rm.scopeMetrics ?? []) for (const m of sm.metrics ?? []) metricNames.add(m.name);
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    metricNames,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
