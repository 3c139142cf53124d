// Vitest globalSetup: one real PostgreSQL per test run (initdb into a temp dir, stopped by PID), unless
// DATABASE_URL points at one. Tests read the URL with `inject("pgUrl")`.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { pgBinDir, startPostgres } from "../../../scripts/lib/postgres.mjs";

export default async function setup(project) {
  if (process.env.DATABASE_URL) {
    project.provide("pgUrl", process.env.DATABASE_URL);
    return;
  }
  ensurePostgres();
  const pg = await startPostgres();
  project.provide("pgUrl", pg.url);
  return async () => {
    await pg.stop();
  };
}

/** On a fresh Debian machine as root (CI), install the server; elsewhere startPostgres explains what to do. */
function ensurePostgres() {
  if (pgBinDir() || process.getuid?.() !== 0 || !existsSync("/etc/debian_version")) return;
  console.log("[lockyard] installing postgresql with apt-get (the PostgreSQL backend's tests need it)…");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
  spawnSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "postgresql"], {
    stdio: "inherit",
    env,
  });
}
