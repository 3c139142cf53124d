import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

export const repoRoot = path.resolve(here, "../../../..");
export const webDir = path.join(repoRoot, "apps/web");
export const apiServer = path.join(repoRoot, "apps/api/dist/server.js");
export const nextBin = path.join(repoRoot, "node_modules/next/dist/bin/next");
export const logDir = path.join(webDir, "e2e/.logs");
export const stackFile = path.join(logDir, "stack.json");
export const screenshotDir = path.join(webDir, "e2e/screenshots");
