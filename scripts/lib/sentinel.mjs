// A Redis Sentinel group on loopback: one primary, its replicas, and the Sentinels watching it, each a child
// process on a free port, stopped by PID. The Sentinels are `redis-server <config> --sentinel`: the
// redis-server package has Sentinel built in, so no redis-sentinel package is needed. Dependency-free, like
// the rest of scripts/lib.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { redisCliBin } from "./cluster.mjs";
import { startRedis } from "./redis.mjs";

const HOST = "127.0.0.1";
const POLL_MS = 100;

function cli(port, args, timeoutMs = 2_000) {
  return new Promise((resolve, reject) => {
    execFile(redisCliBin(), ["-p", String(port), ...args], { timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) reject(new Error(`redis-cli -p ${port} ${args.join(" ")} failed: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

/** A flat `field value field value …` reply (SENTINEL MASTER) as an object. */
function fields(out) {
  const lines = out.trim().split("\n");
  const o = {};
  for (let i = 0; i + 1 < lines.length; i += 2) o[lines[i]] = lines[i + 1];
  return o;
}

async function until(what, check, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  let last = "";
  while (performance.now() < deadline) {
    last = await check().catch((e) => String(e));
    if (last === true) return;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`${what} not reached within ${timeoutMs} ms: ${String(last).slice(0, 300)}`);
}

/** True once the replica on `port` has a live link to its primary; else what it reports. */
async function replicaLinked(port) {
  const info = await cli(port, ["info", "replication"]);
  return info.includes("master_link_status:up") || info;
}

function sentinelConfig(name, primaryPort, o) {
  return [
    `sentinel monitor ${name} ${HOST} ${primaryPort} ${o.quorum}`,
    `sentinel down-after-milliseconds ${name} ${o.downAfterMs}`,
    `sentinel failover-timeout ${name} ${o.failoverTimeoutMs}`,
    `sentinel parallel-syncs ${name} 1`,
    "",
  ].join("\n");
}

/**
 * Starts a primary, `replicas` (default 1) replicas of it, and `sentinels` (default 3) Sentinels monitoring
 * it as `name` with `quorum` (default 2), `downAfterMs` (down-after-milliseconds, default 1000) and
 * `failoverTimeoutMs` (failover-timeout, default 3000). Resolves once the replicas are in sync and every
 * Sentinel knows every replica and every other Sentinel, so a failover can start at once. Returns
 * { name, sentinels: [{ host, port }], primary, replicas, masterAddr(), startReplica(port, primaryPort),
 * stop() }; stop() kills every process it started by PID.
 */
export async function startSentinelGroup({
  name = "lockyard",
  replicas = 1,
  sentinels = 3,
  quorum = 2,
  downAfterMs = 1_000,
  failoverTimeoutMs = 3_000,
  timeoutMs = 30_000,
} = {}) {
  const servers = [];
  const dirs = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  };
  const startReplica = async (port, primaryPort) => {
    const args = ["--replicaof", HOST, String(primaryPort), "--repl-diskless-sync-delay", "0"];
    const server = await startRedis({ ...(port ? { port } : {}), args });
    servers.push(server);
    await until(`replica ${server.port} in sync`, () => replicaLinked(server.port), timeoutMs);
    return server;
  };
  try {
    // No 5 s wait for more replicas before the first full sync.
    const primary = await startRedis({ args: ["--repl-diskless-sync-delay", "0"] });
    servers.push(primary);
    const replicaServers = [];
    for (let i = 0; i < replicas; i++) replicaServers.push(await startReplica(undefined, primary.port));
    const sentinelServers = [];
    for (let i = 0; i < sentinels; i++) {
      const dir = mkdtempSync(path.join(os.tmpdir(), "lockyard-sentinel-"));
      dirs.push(dir);
      const config = path.join(dir, "sentinel.conf");
      writeFileSync(config, sentinelConfig(name, primary.port, { quorum, downAfterMs, failoverTimeoutMs }));
      const s = await startRedis({ config, dir, args: ["--sentinel"] });
      servers.push(s);
      sentinelServers.push(s);
    }
    for (const s of sentinelServers) {
      await until(
        `sentinel ${s.port} seeing ${replicas} replica(s) and ${sentinels - 1} other sentinel(s)`,
        async () => {
          const m = fields(await cli(s.port, ["sentinel", "master", name]));
          const ready =
            m.flags === "master" &&
            Number(m["num-slaves"]) === replicas &&
            Number(m["num-other-sentinels"]) === sentinels - 1;
          return ready || JSON.stringify(m);
        },
        timeoutMs,
      );
    }
    return {
      name,
      sentinels: sentinelServers.map((s) => ({ host: HOST, port: s.port })),
      sentinelServers,
      primary,
      replicas: replicaServers,
      /** The primary's address as the first Sentinel that answers gives it. */
      async masterAddr() {
        for (const s of sentinelServers) {
          const out = await cli(s.port, ["sentinel", "get-master-addr-by-name", name]).catch(() => "");
          const [host, port] = out.trim().split("\n");
          if (host && port) return { host, port: Number(port) };
        }
        throw new Error("no sentinel answered get-master-addr-by-name");
      },
      /** A new replica of `primaryPort` (on `port`, e.g. a killed node's), resolved once in sync. */
      startReplica,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
