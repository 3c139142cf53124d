// A real Redis Cluster: N masters with R replicas each, created with `redis-cli --cluster create`,
// stopped by PID. Tests use random free ports and temp dirs; `REDIS_TOPOLOGY=cluster npm start` passes fixed
// ports and a data dir under .data/ so the cluster (its nodes.conf) survives a restart. Dependency-free,
// like the rest of scripts/lib.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
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

/** Resolves once every node reports cluster_state:ok (and every replica its link up), or rejects. */
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
      const repl = await run(cli, ["-p", String(port), "info", "replication"], 2_000).catch((e) => String(e));
      if (repl.includes("role:slave") && !repl.includes("master_link_status:up")) {
        last = `replica ${port}: ${repl}`;
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
 * The roles as the cluster sees them now (`CLUSTER NODES` asked of any live node): the port of every
 * master serving slots, and of every replica with the port of its master.
 */
export async function clusterRoles(ports) {
  const cli = redisCliBin();
  for (const port of ports) {
    const out = await run(cli, ["-p", String(port), "cluster", "nodes"], 2_000).catch(() => null);
    if (!out) continue;
    const rows = out
      .trim()
      .split("\n")
      .map((l) => l.split(" "));
    const portOf = new Map(rows.map((r) => [r[0], Number(r[1].split("@")[0].split(":").pop())]));
    const alive = (r) => !r[2].includes("fail");
    return {
      masters: rows
        .filter((r) => r[2].includes("master") && alive(r) && r.length > 8)
        .map((r) => portOf.get(r[0])),
      replicas: rows
        .filter((r) => r[2].includes("slave") && alive(r))
        .map((r) => ({ port: portOf.get(r[0]), master: portOf.get(r[3]) })),
    };
  }
  throw new Error("no cluster node answered CLUSTER NODES");
}

/**
 * Starts `masters` (default 3) cluster-enabled redis-servers, plus `replicas` (default 0) per master, and
 * joins them into one cluster. `nodeTimeoutMs` is cluster-node-timeout: how long a master may be
 * unreachable before its replica is promoted. `ports` and `dir` (each node under dir/<port>) make it
 * persistent: when every node's nodes.conf is there, the nodes are started and rejoin instead of a new
 * cluster being created. Returns { nodes: [{ host, port }], servers, stop() }; stop() kills every server by
 * PID.
 */
export async function startCluster({
  masters = 3,
  replicas = 0,
  nodeTimeoutMs = 5000,
  timeoutMs = 30_000,
  ports,
  dir,
} = {}) {
  const cli = redisCliBin();
  const count = masters * (1 + replicas);
  if (ports && ports.length !== count) throw new Error(`startCluster: ${count} ports needed`);
  const taken = new Set();
  const servers = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  const nodeDir = (port) => (dir ? path.join(dir, String(port)) : undefined);
  const rejoin = Boolean(dir && ports?.every((p) => existsSync(path.join(nodeDir(p), "nodes.conf"))));
  try {
    if (dir && !rejoin) for (const p of ports ?? []) rmSync(nodeDir(p), { recursive: true, force: true });
    for (let i = 0; i < count; i++) {
      const port = ports?.[i] ?? (await freeClusterPort(taken));
      taken.add(port);
      const d = nodeDir(port);
      if (d) mkdirSync(d, { recursive: true });
      servers.push(
        await startRedis({
          port,
          ...(d ? { dir: d, persist: true } : {}),
          args: [
            "--cluster-enabled",
            "yes",
            // Relative to the server's own --dir, so nodes never share a config file.
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            String(nodeTimeoutMs),
            ...(d ? ["--save", "60 1"] : []),
          ],
        }),
      );
    }
    const addrs = servers.map((s) => `127.0.0.1:${s.port}`);
    if (!rejoin) {
      await run(
        cli,
        ["--cluster", "create", ...addrs, "--cluster-replicas", String(replicas), "--cluster-yes"],
        timeoutMs,
      );
    }
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
