import path from "node:path";
import type { NextConfig } from "next";

// The Docker image builds with NEXT_OUTPUT=standalone: a self-contained server.js with only the files it
// needs. `npm start` and the tests keep the regular output, which `next start` serves.
const standalone = process.env.NEXT_OUTPUT === "standalone";

// Sent with every response. The CSP (connect-src needs API_URLS, read at request time) is set in src/proxy.ts.
const securityHeaders = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  // frame-ancestors 'none' in the CSP; this for browsers that predate it.
  { key: "X-Frame-Options", value: "DENY" },
];

const config: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  headers: async () => [{ source: "/:path*", headers: securityHeaders }],
  // The API origins come from API_URLS at request time, so one build serves any port layout.
  typescript: { tsconfigPath: "tsconfig.json" },
  ...(standalone && {
    output: "standalone",
    // Trace workspace packages (@lockyard/ui) from the monorepo root; next build runs in apps/web.
    outputFileTracingRoot: path.resolve(process.cwd(), "../.."),
  }),
};

export default config;
