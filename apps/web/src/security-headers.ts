/**
 * The dashboard's Content-Security-Policy. Scripts and styles come from this origin only (inline ones are
 * Next's hydration data); the browser may connect to this origin and the API instances (tRPC over fetch and
 * SSE), nowhere else; no page may frame the dashboard.
 */
export function contentSecurityPolicy(apiUrls: readonly string[], dev: boolean): string {
  const apiOrigins = [...new Set(apiUrls.map((u) => new URL(u).origin))];
  return [
    "default-src 'self'",
    `script-src 'self' 'unsafe-inline'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self' ${apiOrigins.join(" ")}${dev ? " ws: wss:" : ""}`,
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "object-src 'none'",
  ].join("; ");
}
