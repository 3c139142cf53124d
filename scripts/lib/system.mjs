import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** Finds an executable on PATH (or in the usual sbin folders, where Debian puts redis-server). */
export function which(bin) {
  const dirs = [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/sbin", "/sbin"];
  for (const d of dirs) {
    const p = path.join(d, bin);
    if (d && existsSync(p)) return p;
  }
  return null;
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;
const isDebian = () => existsSync("/etc/debian_version");

let aptUpdated = false;
/**
 * Makes sure Debian packages that provide `bins` are installed. As root on Debian it installs them
 * with apt-get; anywhere else it exits with a message saying what to install. With `optional`, it
 * never exits: it answers whether they are there (installing them first when it can).
 */
export function ensureSystemPackages(wanted, { why, optional = false } = {}) {
  const present = (w) => (w.found ? w.found() : which(w.bin));
  const missing = wanted.filter((w) => !present(w));
  if (missing.length === 0) return true;
  if (optional && !(isRoot() && isDebian())) return false;
  const pkgs = [...new Set(missing.map((m) => m.pkg))];
  if (isRoot() && isDebian()) {
    console.log(`[lockyard] installing ${pkgs.join(", ")} with apt-get${why ? ` (${why})` : ""}…`);
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    if (!aptUpdated) {
      spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
      aptUpdated = true;
    }
    const r = spawnSync("apt-get", ["install", "-y", "-qq", ...pkgs], {
      stdio: "inherit",
      env,
    });
    if (r.status !== 0 || missing.some((w) => !present(w))) {
      if (optional) return false;
      fail(`apt-get install ${pkgs.join(" ")} failed. Install them yourself and run again.`);
    }
    return true;
  }
  fail(
    `missing: ${missing.map((m) => m.bin).join(", ")}.\n` +
      `  Install them, e.g. on Debian/Ubuntu: sudo apt-get install -y ${pkgs.join(" ")}` +
      `\n  (or on macOS: brew install ${pkgs.map((p) => (p === "redis-server" ? "redis" : p)).join(" ")})` +
      (pkgs.includes("redis-server") ? "\n  or point REDIS_URL at a Redis you already run." : ""),
  );
}

export function fail(message) {
  console.error(`\n[lockyard] ${message}\n`);
  process.exit(1);
}

/** Runs `npm ci` when node_modules is missing or older than package-lock.json. */
export function ensureDependencies(root) {
  const lock = path.join(root, "package-lock.json");
  const marker = path.join(root, "node_modules", ".package-lock.json");
  const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs;
  if (!stale) return;
  console.log("[lockyard] installing dependencies (npm ci)…");
  const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) fail("npm ci failed; see the output above.");
}

export function checkNode() {
  const [maj, min] = process.versions.node.split(".").map(Number);
  if (maj < 20 || (maj === 20 && min < 19))
    fail(`Node ${process.versions.node} is too old: Lockyard needs Node >= 20.19.`);
}

export function readJson(p) {
  return JSON.parse(readFileSync(p, "utf8"));
}

export function redisServerVersion(bin) {
  try {
    return execFileSync(bin, ["--version"], { encoding: "utf8" }).match(/v=(\S+)/)?.[1] ?? "unknown";
  } catch {
    return "unknown";
  }
}
