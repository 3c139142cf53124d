import type { ServerResponse } from "node:http";

/**
 * Headers every API response carries. `nosniff` stops a browser from reading a JSON error as script or
 * HTML. `Vary: Origin` must survive the tRPC handler, which sets its own Vary and would overwrite ours:
 * a cache could otherwise serve one origin's CORS answer to another.
 */
export function baseHeaders(res: ServerResponse): void {
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("vary", "origin");
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name, value) => {
    if (name.toLowerCase() !== "vary") return setHeader(name, value);
    const given = Array.isArray(value) ? value.join(", ") : String(value);
    const parts = new Set(
      `origin, ${given}`
        .split(",")
        .map((v) => v.trim().toLowerCase())
        .filter(Boolean),
    );
    return setHeader("vary", [...parts].join(", "));
  };
}

export function plain(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
  res.end(JSON.stringify(body));
}
