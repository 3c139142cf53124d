// A real Redis Cluster for tests: N masters (no replicas) on free loopback ports, created with
// `redis-cli --cluster create`, stopped by PID. Dependency-free, like the rest of scripts/lib.
import { execFile } from "node:child_process";
import { isPortFree } from "./ports.mjs";
import { startRedis } from "./redis.mjs";
import { which } from "./system.mjs";

// Every node also listens on its cluster bus port, port + 10000, which must be free too.
const BUS_OFFSET = 10_000;

function run(bin, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} ${args.join(" ")} failed: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

export function redisCliBin() {
  const bin = which("redis-cli");
  if (!bin) throw new Error("redis-cli is not installed (Debian/Ubuntu: apt-get install -y redis-tools)");
  return bin;
}

/** A port p ≤ 55535 such that p and p + 10000 are both free (random, so parallel runs rarely collide). */
async function freeClusterPort(taken) {
  for (let i = 0; i < 200; i++) {
    const p = 20_000 + Math.floor(Math.random() * 25_000);
    if (taken.has(p) || taken.has(p + BUS_OFFSET) || taken.has(p - BUS_OFFSET)) continue;
    if ((await isPortFree(p)) && (await isPortFree(p + BUS_OFFSET))) return p;
  }
  throw new Error("no free port pair (p, p+10000) for a cluster node");
}

/** Resolves once every node reports cluster_state:ok, or rejects after timeoutMs. */
async function waitForClusterOk(cli, ports, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  let last = "";
  while (performance.now() < deadline) {
    let ok = true;
    for (const port of ports) {
      last = await run(cli, ["-p", String(port), "cluster", "info"], 2_000).catch((e) => String(e));
      if (!last.includes("cluster_state:ok")) {
        ok = false;
        break;
      }
    }
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`cluster did not reach cluster_state:ok within ${timeoutMs} ms: ${last.slice(0, 200)}`);
}

/**
 * Starts `masters` (default 3) cluster-enabled redis-servers and joins them into one cluster.
 * Returns { nodes: [{ host, port }], servers, stop() }; stop() kills every server by PID.
 */
export async function startCluster({ masters = 3, timeoutMs = 30_000 } = {}) {
  const cli = redisCliBin();
  const taken = new Set();
  const servers = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freeClusterPort(taken);
      taken.add(port);
      servers.push(
        await startRedis({
          port,
          args: [
            "--cluster-enabled",
            "yes",
            // Relative to the server's own temp --dir, so nodes never share a config file.
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "5000",
          ],
        }),
      );
    }
    const addrs = servers.map((s) => `127.0.0.1:${s.port}`);
    await run(cli, ["--cluster", "create", ...addrs, "--cluster-replicas", "0", "--cluster-yes"], timeoutMs);
    await waitForClusterOk(
      cli,
      servers.map((s) => s.port),
      timeoutMs,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { nodes: servers.map((s) => ({ host: "127.0.0.1", port: s.port })), servers, stop };
}
