// A stand-in OTLP/HTTP collector for the e2e stack: the APIs export their traces here, and a spec asks what one
// trace holds (GET /traces/<traceId> → { "<span name>": count }). Metrics are accepted and dropped.
// Usage: node otlp-sink.mjs <port>
import { createServer } from "node:http";

const port = Number(process.argv[2]);
/** traceId → span name → count */
const traces = new Map();

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url?.startsWith("/traces/")) {
    const names = traces.get(req.url.slice("/traces/".length)) ?? new Map();
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Object.fromEntries(names)));
    return;
  }
  if (req.method === "GET" && req.url === "/healthz") {
    res.writeHead(200).end("ok");
    return;
  }
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (d) => {
    body += d;
  });
  req.on("end", () => {
    if (req.url === "/v1/traces") {
      try {
        for (const rs of JSON.parse(body).resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? []) {
              const names = traces.get(s.traceId) ?? new Map();
              names.set(s.name, (names.get(s.name) ?? 0) + 1);
              traces.set(s.traceId, names);
            }
      } catch {
        res.writeHead(400).end();
        return;
      }
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
server.listen(port, "127.0.0.1");
