// Vitest globalSetup: one real PostgreSQL per test run (initdb into a temp dir, stopped by PID), unless
// DATABASE_URL points at one. Tests read its URL with `inject("pgUrl")`.
import type { TestProject } from "vitest/node";
// @ts-expect-error plain .mjs helper without types
import { pgBinDir, startPostgres } from "../../../scripts/lib/postgres.mjs";
// @ts-expect-error plain .mjs helper without types
import { ensureSystemPackages } from "../../../scripts/lib/system.mjs";

export default async function setup(project: TestProject) {
  const url = process.env.DATABASE_URL;
  if (url) {
    project.provide("pgUrl", url);
    return;
  }
  // As root on Debian it installs the server; elsewhere it says what to install (or to set DATABASE_URL).
  ensureSystemPackages([{ bin: "initdb", pkg: "postgresql", found: pgBinDir }], {
    why: "the postgres mode's tests need a real PostgreSQL",
  });
  const pg = await startPostgres();
  project.provide("pgUrl", pg.url);
  return async () => {
    await pg.stop();
  };
}
