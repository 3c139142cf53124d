// The API's own parser (apps/api/dist/env.js) judges its environment before anything is provisioned or built,
// so a bad REDIS_URL or LOCK_LEASE_MS is named in a second instead of by two crashing APIs after the build.
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

/**
 * What the API would refuse in `env` (its "invalid environment: …" line), or null when it would accept it or
 * cannot judge yet: before the first build there is no dist, and start.mjs asks again after building.
 */
export async function apiEnvProblem(root, env) {
  const file = path.join(root, "apps/api/dist/env.js");
  if (!existsSync(file)) return null;
  let parseEnv;
  try {
    ({ parseEnv } = await import(pathToFileURL(file).href));
  } catch {
    return null;
  }
  if (typeof parseEnv !== "function") return null;
  try {
    parseEnv(env);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
