import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["./test/build.ts", "../../scripts/lib/vitest-redis.mjs", "./test/pg-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Lease timings of a few hundred ms need the CPU; files run one after another.
    fileParallelism: false,
    // A failed test runs once more; one that needed it is named in `npm test`'s summary.
    retry: 1,
    reporters: ["default", "../../scripts/lib/vitest-flaky-reporter.mjs"],
  },
});
