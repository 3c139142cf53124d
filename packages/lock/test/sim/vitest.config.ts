import { defineConfig } from "vitest/config";

// The simulation alone (scripts/sim.mjs): no real Redis or PostgreSQL is started for it.
export default defineConfig({
  test: {
    include: ["test/sim/sim.test.ts"],
    testTimeout: 30_000,
  },
});
