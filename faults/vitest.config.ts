import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes and leases of a few hundred ms: one file at a time on this 2-core machine.
    fileParallelism: false,
    // A failed test runs once more; one that needed it is named in `npm test`'s summary.
    retry: 1,
    reporters: ["default", "../scripts/lib/vitest-flaky-reporter.mjs"],
  },
});
