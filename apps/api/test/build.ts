// Vitest globalSetup: the integration tests run `node dist/server.js`, and the crash/fencing
// scenarios fork `dist/demo/child.js`, so the API's own dist must be fresh before any test runs.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export default function setup() {
  const cwd = fileURLToPath(new URL("..", import.meta.url));
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd, stdio: "inherit" });
}
