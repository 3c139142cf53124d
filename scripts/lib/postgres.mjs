import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, waitForPort } from "./ports.mjs";
import { which } from "./system.mjs";

/** Finds PostgreSQL's server binaries (Debian keeps them in /usr/lib/postgresql/<v>/bin, off PATH). */
export function pgBinDir() {
  const onPath = which("initdb");
  if (onPath) {
    const real = spawnSync("readlink", ["-f", onPath], { encoding: "utf8" }).stdout.trim() || onPath;
    return path.dirname(real);
  }
  const base = "/usr/lib/postgresql";
  if (existsSync(base)) {
    const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
    for (const v of versions)
      if (existsSync(path.join(base, v, "bin", "initdb"))) return path.join(base, v, "bin");
  }
  return null;
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

function pgUser() {
  const r = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  if (r.status !== 0)
    throw new Error(
      "running PostgreSQL as root needs a `postgres` system user (apt-get install postgresql creates it)",
    );
  const gid = Number(spawnSync("id", ["-g", "postgres"], { encoding: "utf8" }).stdout.trim());
  return { uid: Number(r.stdout.trim()), gid };
}

/** PostgreSQL refuses to run as root, so as root the server commands run as the `postgres` user (spawned with its uid, so the PID we hold is the server's own). */
function serverUserOptions() {
  return isRoot() ? { ...pgUser(), env: { ...process.env, HOME: "/tmp" } } : {};
}

/**
 * Starts a real PostgreSQL cluster on a loopback port: initdb into `dir` (once), then postgres on `port`.
 * Returns { url, port, pid, dir, stop() }. Trust auth on 127.0.0.1 only; database "lockyard".
 */
export async function startPostgres(opts = {}) {
  const bin = pgBinDir();
  if (!bin) {
    throw new Error(
      "PostgreSQL is not installed. Install it (Debian/Ubuntu: apt-get install -y postgresql) or set DATABASE_URL.",
    );
  }
  const port = opts.port ?? (await freePort());
  const ownDir = !opts.dir;
  const dir = opts.dir ?? mkdtempSync(path.join(os.tmpdir(), "lockyard-pg-"));
  const socketDir = mkdtempSync(path.join(os.tmpdir(), "lockyard-pgsock-"));
  mkdirSync(dir, { recursive: true });
  if (isRoot()) {
    const { uid, gid } = pgUser();
    chownSync(dir, uid, gid);
    chownSync(socketDir, uid, gid);
  }
  if (!existsSync(path.join(dir, "PG_VERSION"))) {
    const r = spawnSync(
      path.join(bin, "initdb"),
      ["-D", dir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-instructions"],
      { encoding: "utf8", cwd: dir, ...serverUserOptions() },
    );
    if (r.status !== 0) throw new Error(`initdb failed: ${r.stderr || r.stdout}`);
    writeFileSync(path.join(dir, "pg_hba.conf"), "local all all trust\nhost all all 127.0.0.1/32 trust\n");
  }
  const child = spawn(
    path.join(bin, "postgres"),
    [
      "-D",
      dir,
      "-p",
      String(port),
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      `unix_socket_directories=${socketDir}`,
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "max_connections=200",
    ],
    { stdio: opts.quiet === false ? "inherit" : "ignore", cwd: dir, ...serverUserOptions() },
  );
  await waitForPort(port, { timeoutMs: 20_000 });
  // The port opens before the server accepts queries; create the database once it does.
  const psql = path.join(bin, "psql");
  const deadline = performance.now() + 20_000;
  for (;;) {
    const r = spawnSync(psql, ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-tAc", "SELECT 1"], {
      encoding: "utf8",
    });
    if (r.status === 0) break;
    if (performance.now() > deadline)
      throw new Error(`PostgreSQL on ${port} did not accept queries: ${r.stderr}`);
    await new Promise((res) => setTimeout(res, 100));
  }
  spawnSync(
    psql,
    ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-tAc", "CREATE DATABASE lockyard"],
    {
      encoding: "utf8",
    },
  );
  const exited = () =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise((r) => child.once("exit", () => r()));
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/lockyard`,
    dir,
    pid: child.pid,
    kill(signal = "SIGKILL") {
      try {
        process.kill(child.pid, signal);
      } catch {}
      return exited();
    },
    async stop() {
      try {
        process.kill(child.pid, "SIGINT"); // fast shutdown
      } catch {}
      const t = setTimeout(() => {
        try {
          process.kill(child.pid, "SIGKILL");
        } catch {}
      }, 5000);
      await exited();
      clearTimeout(t);
      if (ownDir && !opts.persist) rmSync(dir, { recursive: true, force: true });
      rmSync(socketDir, { recursive: true, force: true });
    },
  };
}
