import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort } from "./ports.mjs";
import { which } from "./system.mjs";

export function redisServerBin() {
  const bin = process.env.REDIS_SERVER_BIN || which("redis-server");
  if (!bin) {
    throw new Error(
      "redis-server is not installed. Install it (Debian/Ubuntu: apt-get install -y redis-server) " +
        "or run `npm test`, which installs it when run as root.",
    );
  }
  return bin;
}

/** Sends one inline command over a raw socket; resolves with the first reply line. No client library needed. */
export function rawCommand(port, line, { host = "127.0.0.1", timeoutMs = 1000 } = {}) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, host);
    const t = setTimeout(() => {
      s.destroy();
      reject(new Error("timeout"));
    }, timeoutMs);
    let buf = "";
    s.on("connect", () => s.write(`${line}\r\n`));
    s.on("data", (d) => {
      buf += d.toString();
      if (buf.includes("\r\n")) {
        clearTimeout(t);
        s.end();
        resolve(buf.split("\r\n")[0]);
      }
    });
    s.on("error", (e) => {
      clearTimeout(t);
      reject(e);
    });
  });
}

async function waitForPing(port, child, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`redis-server on port ${port} exited with code ${child.exitCode}`);
    try {
      const reply = await rawCommand(port, "PING", { timeoutMs: 300 });
      if (reply === "+PONG" || reply.startsWith("-NOAUTH")) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
}

/**
 * Starts a real redis-server child process on a loopback port.
 * Returns { port, url, pid, dir, stop(), kill(signal), restart() }. stop() ends it by PID.
 * Options: port (default: a free one), dir (default: a temp dir, removed on stop),
 * args (extra redis-server arguments), config (a config file, read first: Sentinel needs one it can
 * rewrite), persist (keep the data dir), quiet.
 */
export async function startRedis(opts = {}) {
  const bin = redisServerBin();
  const port = opts.port ?? (await freePort());
  const ownDir = !opts.dir;
  const dir = opts.dir ?? mkdtempSync(path.join(os.tmpdir(), "lockyard-redis-"));
  mkdirSync(dir, { recursive: true });
  const args = [
    ...(opts.config ? [opts.config] : []),
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "no",
    "--daemonize",
    "no",
    "--logfile",
    "",
    "--loglevel",
    "warning",
    ...(opts.args ?? []),
  ];
  const state = { child: null };
  const launch = async () => {
    const child = spawn(bin, args, { stdio: opts.quiet === false ? "inherit" : "ignore", detached: false });
    state.child = child;
    await waitForPing(port, child, opts.startTimeoutMs ?? 10_000);
    return child;
  };
  await launch();
  const exited = (child) =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise((r) => child.once("exit", () => r()));
  const handle = {
    port,
    host: "127.0.0.1",
    url: `redis://127.0.0.1:${port}`,
    dir,
    get pid() {
      return state.child?.pid;
    },
    /** Sends a signal to the server process (SIGKILL, SIGSTOP, SIGCONT…). */
    kill(signal = "SIGKILL") {
      try {
        process.kill(state.child.pid, signal);
      } catch {}
      return signal === "SIGSTOP" || signal === "SIGCONT" ? Promise.resolve() : exited(state.child);
    },
    /** Starts the server again on the same port (after kill()). */
    async restart() {
      await exited(state.child);
      await launch();
    },
    async stop() {
      const child = state.child;
      if (child && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(child.pid, "SIGCONT");
          process.kill(child.pid, "SIGKILL");
        } catch {}
        await exited(child);
      }
      if (ownDir && !opts.persist) rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}
