// Packs @lockyard/lock the way `npm pack` / `npm publish` do (prepack: clean dist/, build), but from a
// staged copy in the OS temp dir, so the workspace's own dist/ (which other packages and running test
// suites import) is never deleted or rewritten under them.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const root = path.resolve(libDir, "../..");

/** npm exports npm_* variables (workspace, prefix, …) to its scripts; nested npm commands must not see them. */
export function cleanEnv(extra = {}) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^npm_/i.test(k) || /^npm_config_(cache|registry|userconfig)$/i.test(k),
    ),
  );
  return { ...env, ...extra };
}

/** Packs the library into `dest` (created if missing); returns the tarball's absolute path. */
export function packLibrary(dest) {
  mkdirSync(dest, { recursive: true });
  const stage = mkdtempSync(path.join(os.tmpdir(), "lockyard-pack-"));
  try {
    const pkgDir = path.join(stage, "packages", "lock");
    cpSync(libDir, pkgDir, {
      recursive: true,
      filter: (src) => !/[\\/](node_modules|dist|\.turbo)$/.test(src),
    });
    cpSync(path.join(root, "tsconfig.base.json"), path.join(stage, "tsconfig.base.json"));
    // tsc, @types/node and the peers' types come from the workspace's install.
    symlinkSync(path.join(root, "node_modules"), path.join(stage, "node_modules"), "dir");
    const r = spawnSync("npm", ["pack", "--pack-destination", dest, "--loglevel=error"], {
      cwd: pkgDir,
      env: cleanEnv(),
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`npm pack failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
    const tgz = readdirSync(dest).find((f) => /^lockyard-lock-.*\.tgz$/.test(f));
    if (!tgz) throw new Error(`npm pack left no tarball in ${dest}`);
    return path.join(dest, tgz);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
