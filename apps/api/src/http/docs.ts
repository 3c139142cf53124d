import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";

// Swagger UI from the npm package, served by the API itself: no CDN, nothing fetched from elsewhere.
const swaggerDir = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lockyard REST API</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/api/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>
`;

// A file rather than an inline script, so a strict Content-Security-Policy needs no exception.
const INIT = `window.ui = SwaggerUIBundle({
  url: "/api/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
});
`;

const TYPES = { css: "text/css; charset=utf-8", js: "text/javascript; charset=utf-8" } as const;
const ASSETS = new Map<string, keyof typeof TYPES>([
  ["swagger-ui.css", "css"],
  ["swagger-ui-bundle.js", "js"],
]);
const cache = new Map<string, Buffer>();

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI sets style attributes on its elements.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** Serves `/api/docs` (the page) and `/api/docs/<asset>`. Returns false when `path` is not one of them. */
export function serveDocs(res: ServerResponse, urlPath: string): boolean {
  if (urlPath === "/api/docs" || urlPath === "/api/docs/") {
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-cache",
      "content-security-policy": CSP,
    });
    res.end(HTML);
    return true;
  }
  const name = urlPath.startsWith("/api/docs/") ? urlPath.slice("/api/docs/".length) : null;
  if (name === "init.js") {
    res.writeHead(200, { "content-type": TYPES.js, "cache-control": "no-cache" });
    res.end(INIT);
    return true;
  }
  const type = name !== null ? ASSETS.get(name) : undefined;
  if (name === null || !type) return false;
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(path.join(swaggerDir, name));
    cache.set(name, body);
  }
  res.writeHead(200, { "content-type": TYPES[type], "cache-control": "public, max-age=3600" });
  res.end(body);
  return true;
}
