// The library's Redis suites against the latest ioredis 5 (the peer range is `^5.4 || ^6`; the workspace
// has ioredis 6). `ioredis5` is an npm alias devDependency; every `import … from "ioredis"` in src/ and
// test/ resolves to it here, and consumer-test/ioredis5-check.ts fails the run if it did not.
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: [{ find: /^ioredis$/, replacement: "ioredis5" }] },
  test: {
    // Everything that talks to Redis through ioredis: core (on Redis), standalone, Cluster, replica, Redlock.
    // Not the PostgreSQL suites nor the deterministic simulation (test/sim), which use no ioredis.
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // The simulation never touches ioredis: it runs once, in the main suite. The chaos run's processes load the
    // built library with the workspace's ioredis (no alias outside vitest), and it needs PostgreSQL: main suite only.
    exclude: ["**/node_modules/**", "test/**/pg*", "test/pg/**", "test/sim/**", "test/kinds/chaos*"],
    globalSetup: ["../../scripts/lib/vitest-redis.mjs"],
    setupFiles: ["./consumer-test/ioredis5-check.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    fileParallelism: false,
    // A failed test runs once more; one that needed it is named in `npm test`'s summary.
    retry: 1,
    reporters: ["default", "../../scripts/lib/vitest-flaky-reporter.mjs"],
  },
});
