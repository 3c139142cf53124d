import path from "node:path";
import type { NextConfig } from "next";

// The Docker image builds with NEXT_OUTPUT=standalone: a self-contained server.js with only the files it
// needs. `npm start` and the tests keep the regular output, which `next start` serves.
const standalone = process.env.NEXT_OUTPUT === "standalone";

const config: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // The API origins come from API_URLS at request time, so one build serves any port layout.
  typescript: { tsconfigPath: "tsconfig.json" },
  ...(standalone && {
    output: "standalone",
    // Trace workspace packages (@lockyard/ui) from the monorepo root; next build runs in apps/web.
    outputFileTracingRoot: path.resolve(process.cwd(), "../.."),
  }),
};

export default config;
