// `npm run test:consumer -w @lockyard/lock`: the packed tarball in scratch projects (see consumer.test.ts).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  test: {
    include: ["consumer.test.ts"],
    globalSetup: ["../../../scripts/lib/vitest-redis.mjs"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
