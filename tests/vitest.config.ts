// Repository-level tests (tests/**): ones that exercise the repo as a user gets it, e.g. a fresh clone.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: path.dirname(fileURLToPath(import.meta.url)),
  test: {
    include: ["**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 630_000,
    fileParallelism: false,
  },
});
