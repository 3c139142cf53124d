import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["./test/build.ts", "../../scripts/lib/vitest-redis.mjs", "./test/pg-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Lease timings of a few hundred ms need the CPU; files run one after another.
    fileParallelism: false,
  },
});
