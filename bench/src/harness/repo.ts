import { fileURLToPath } from "node:url";

/** The repository root, found from this file's place in bench/dist/harness/. */
export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

export const repoPath = (relative: string): string => fileURLToPath(new URL(relative, `file://${repoRoot}`));
