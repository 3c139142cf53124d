#!/usr/bin/env node
// `npm run bench`: Lockyard against redis-semaphore, node-redlock and the seed design, in one run, on a
// redis-server the bench starts itself (plus Lockyard on a PostgreSQL it starts, when PostgreSQL is installed).
// Plain Node with no dependencies: it runs before `npm ci`.
// Extra arguments go to the bench: `npm run bench -- --only=c --rounds=5`, `npm run bench -- --quick`.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pgBinDir } from "./lib/postgres.mjs";
import { exec } from "./lib/procs.mjs";
import { checkNode, ensureDependencies, ensureSystemPackages, fail } from "./lib/system.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

checkNode();
ensureDependencies(root);
ensureSystemPackages([{ bin: "redis-server", pkg: "redis-server" }], {
  why: "the bench runs on a real redis-server",
});
// Optional: Lockyard's PostgreSQL backend gets rows in (a)–(c) when PostgreSQL is installed (or DATABASE_URL is
// set); without it the bench says so and runs everything else.
if (!process.env.DATABASE_URL) {
  ensureSystemPackages([{ bin: "initdb", pkg: "postgresql", found: pgBinDir }], {
    why: "the bench also measures Lockyard's PostgreSQL backend",
    optional: true,
  });
}

// The bench and the library it measures, plus the API that scenario (e) starts twice.
const { code: built } = await exec(
  "npx",
  [
    "turbo",
    "run",
    "build",
    "--filter=@lockyard/bench...",
    "--filter=@lockyard/api...",
    "--output-logs=errors-only",
  ],
  { cwd: root, env: { TURBO_TELEMETRY_DISABLED: "1" } },
);
if (built !== 0) fail("the build failed; see the output above.");

// Ctrl-C reaches the bench too (same process group); let it stop its redis-server and API instances first.
process.on("SIGINT", () => {});
const { code } = await exec(
  process.execPath,
  ["--expose-gc", "bench/dist/main.js", ...process.argv.slice(2)],
  {
    cwd: root,
  },
);
process.exit(code);
