// A fresh clone of this repository in the OS temp dir, with the already-installed dependencies: a
// hard-linked copy of node_modules (cp -al: seconds, no network), its caches dropped, and a fresh
// node_modules/.package-lock.json so `npm start` sees the install as current instead of running npm ci.
// Workspace links (node_modules/@lockyard/*) are relative, so they point into the clone.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export function freshClone(root, prefix = "lockyard-clone-") {
  const tmp = mkdtempSync(path.join(os.tmpdir(), prefix));
  // mkdtemp makes it 0700; initdb runs as the postgres user (not root) and must reach .data/pg inside.
  chmodSync(tmp, 0o755);
  const dir = path.join(tmp, "lockyard");
  execFileSync("git", ["clone", "--quiet", root, dir], { stdio: "inherit" });
  execFileSync("cp", ["-al", path.join(root, "node_modules"), path.join(dir, "node_modules")]);
  // Caches are written in place; a hard link would let the clone write into the original's files.
  for (const cache of [".cache", ".vite", ".vitest", ".turbo"])
    rmSync(path.join(dir, "node_modules", cache), { recursive: true, force: true });
  const marker = path.join(dir, "node_modules", ".package-lock.json");
  rmSync(marker);
  copyFileSync(path.join(root, "node_modules", ".package-lock.json"), marker);
  return { tmp, dir, remove: () => rmSync(tmp, { recursive: true, force: true }) };
}
