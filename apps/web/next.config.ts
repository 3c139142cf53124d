import type { NextConfig } from "next";

const config: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // The API origins come from API_URLS at request time, so one build serves any port layout.
  typescript: { tsconfigPath: "tsconfig.json" },
};

export default config;
