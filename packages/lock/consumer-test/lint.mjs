#!/usr/bin/env node
// `npm run lint -w @lockyard/lock`: publint and Are the Types Wrong on the tarball users would install.
// Profile esm-only: the package is ESM; CommonJS users require() it through Node's require(esm)
// (Node >= 20.19), which attw's TypeScript does not model. consumer.test.ts runs that require() for real.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { cleanEnv, packLibrary } from "./pack.mjs";

const tmp = mkdtempSync(path.join(os.tmpdir(), "lockyard-lint-"));
let failed = false;
try {
  const tarball = packLibrary(tmp);
  for (const [name, args] of [
    ["publint", ["publint", "run", tarball, "--strict"]],
    ["attw", ["attw", tarball, "--profile", "esm-only", "--format", "table-flipped"]],
  ]) {
    const r = spawnSync("npx", ["--no-install", ...args], { stdio: "inherit", env: cleanEnv() });
    if (r.status !== 0) {
      console.error(`${name} failed on ${path.basename(tarball)}`);
      failed = true;
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
