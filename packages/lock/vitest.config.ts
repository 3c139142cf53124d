import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["../../scripts/lib/vitest-redis.mjs", "./test/pg-setup.mjs"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Lease timings of a few hundred ms need the CPU; files run one after another.
    fileParallelism: false,
    // Real leases on a shared machine: a failed test runs once more, and one that needed it is named in
    // `npm test`'s summary (scripts/lib/vitest-flaky-reporter.mjs). A broken feature fails both runs.
    retry: 1,
    reporters: ["default", "../../scripts/lib/vitest-flaky-reporter.mjs"],
  },
});
