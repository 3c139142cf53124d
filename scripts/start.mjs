#!/usr/bin/env node
// `npm start`: install, provision Redis (and PostgreSQL, optional), build, run api ×2 + the dashboard.
// `npm run dev` (--dev): the same services, but the libraries and the API recompile on change (tsc --watch),
// the APIs restart on change (node --watch) and the dashboard runs under `next dev`.
// Plain Node: it runs before `npm ci`.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { apiEnvProblem } from "./lib/api-env.mjs";
import { startCluster } from "./lib/cluster.mjs";
import { dotenvProblem } from "./lib/dotenv-check.mjs";
import { describeExit, firstExit, firstWatchFailure } from "./lib/early-exit.mjs";
import { isPortFree, waitForPort } from "./lib/ports.mjs";
import { pgBinDir, startPostgres } from "./lib/postgres.mjs";
import { exec, run, stopAll } from "./lib/procs.mjs";
import { startRedis } from "./lib/redis.mjs";
import { startSentinelGroup } from "./lib/sentinel.mjs";
import { startPorts } from "./lib/start-ports.mjs";
import { checkNode, ensureDependencies, ensureSystemPackages, fail } from "./lib/system.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dev = process.argv.includes("--dev");
const REDIS_PORT = 6379;
const REDLOCK_PORTS = [6380, 6381, 6382];
// REDIS_TOPOLOGY=cluster: 3 masters + 1 replica each on 7001-7006 (cluster bus on 17001-17006).
const CLUSTER_PORTS = [7001, 7002, 7003, 7004, 7005, 7006];
const CLUSTER_NODE_TIMEOUT_MS = 2_000;
const PG_PORT = 5433; // not 5432, where a system PostgreSQL may already listen

checkNode();
// Variables in .env (see .env.example) apply unless already set in the shell.
const dotenv = path.join(root, ".env");
if (existsSync(dotenv)) {
  const problem = dotenvProblem(readFileSync(dotenv, "utf8"));
  if (problem)
    fail(`.env ${problem}. Fix or delete that line (.env.example shows the format) and run npm start again.`);
  process.loadEnvFile(dotenv);
}
ensureDependencies(root);

/** WEB_PORT and API_PORTS (comma-separated) move what `npm start` runs; defaults 3000 and 4001,4002. */
let API_PORTS;
let WEB_PORT;
try {
  ({ apiPorts: API_PORTS, webPort: WEB_PORT } = startPorts(process.env));
} catch (err) {
  fail(err.message);
}
const apiUrls = API_PORTS.map((p) => `http://127.0.0.1:${p}`).join(",");

/** The environment API instance `i` gets, besides what start.mjs provisions for it. */
const apiEnvOf = (i, extra = {}) => ({
  ...process.env,
  PORT: String(API_PORTS[i]),
  INSTANCE_ID: `api-${i + 1}`,
  API_URLS: apiUrls,
  ...extra,
});
async function checkApiEnv() {
  const problem = await apiEnvProblem(root, apiEnvOf(0));
  if (problem) fail(`the API would refuse its environment: ${problem}.`);
}
await checkApiEnv();

for (const port of [...API_PORTS, WEB_PORT]) {
  if (!(await isPortFree(port)))
    fail(`port ${port} is already in use. Stop whatever listens there and run npm start again.`);
}

const redisServers = [];
let postgres = null;
let shuttingDown = false;
async function shutdown(code = 0) {
  if (shuttingDown) return;
  shuttingDown = true;
  console.log("\n[lockyard] stopping…");
  await stopAll();
  await Promise.all([...redisServers.map((r) => r.stop()), postgres?.stop()]);
  process.exit(code);
}
process.on("SIGINT", () => shutdown(0));
process.on("SIGTERM", () => shutdown(0));

async function localRedis(port, name) {
  const free = await isPortFree(port);
  const r = await startRedis({
    port: free ? port : undefined,
    dir: path.join(root, ".data", name),
    args: ["--save", "60 1", "--appendonly", "no"],
  });
  redisServers.push(r);
  console.log(
    `[lockyard] ${name}: redis-server pid ${r.pid} at ${r.url}${free ? "" : ` (port ${port} was busy)`}`,
  );
  return r.url;
}

/**
 * REDIS_TOPOLOGY=cluster without REDIS_CLUSTER_NODES: a local 3-master cluster with one replica per master, its
 * data (nodes.conf, dumps) under .data/cluster/<port> so it is the same cluster next time. On other ports (and
 * fresh) when 7001-7006 or their bus ports are taken.
 */
async function localCluster() {
  ensureSystemPackages([{ bin: "redis-cli", pkg: "redis-tools" }], { why: "REDIS_TOPOLOGY=cluster" });
  const ports = [...CLUSTER_PORTS, ...CLUSTER_PORTS.map((p) => p + 10_000)];
  const free = (await Promise.all(ports.map((p) => isPortFree(p)))).every(Boolean);
  const cluster = await startCluster({
    masters: 3,
    replicas: 1,
    nodeTimeoutMs: CLUSTER_NODE_TIMEOUT_MS,
    ...(free ? { ports: CLUSTER_PORTS, dir: path.join(root, ".data", "cluster") } : {}),
  });
  redisServers.push(cluster);
  const pids = cluster.servers.map((s) => s.pid).join(", ");
  console.log(
    `[lockyard] redis cluster: 3 masters + 3 replicas, redis-server pids ${pids}${free ? "" : " (ports 7001-7006 were busy)"}`,
  );
  return cluster.nodes.map((n) => `${n.host}:${n.port}`).join(",");
}

/**
 * REDIS_TOPOLOGY=sentinel without REDIS_SENTINELS: a local primary, one replica and three Sentinels
 * (`redis-server --sentinel`) on free ports, fresh each time, with a 2 s down-after: kill the primary and
 * watch the APIs and the dashboard follow the failover.
 */
async function localSentinels() {
  ensureSystemPackages([{ bin: "redis-cli", pkg: "redis-tools" }], { why: "REDIS_TOPOLOGY=sentinel" });
  const group = await startSentinelGroup({ downAfterMs: 2_000, failoverTimeoutMs: 5_000 });
  redisServers.push(group);
  const line = (what, servers) => servers.map((x) => `${what} pid ${x.pid} at redis://127.0.0.1:${x.port}`);
  for (const l of [
    ...line("primary", [group.primary]),
    ...line("replica", group.replicas),
    ...line("sentinel", group.sentinelServers),
  ])
    console.log(`[lockyard] ${l.replace(" pid", ": redis-server pid")}`);
  process.env.REDIS_SENTINEL_NAME = group.name;
  return group.sentinels.map((x) => `${x.host}:${x.port}`).join(",");
}

const topology =
  process.env.REDIS_TOPOLOGY ||
  (process.env.REDIS_CLUSTER_NODES ? "cluster" : process.env.REDIS_SENTINELS ? "sentinel" : "single");
if (topology !== "single" && topology !== "cluster" && topology !== "sentinel")
  fail(`REDIS_TOPOLOGY=${topology}: expected "single" (the default), "cluster" or "sentinel".`);
let redisUrl = process.env.REDIS_URL;
let clusterNodes = process.env.REDIS_CLUSTER_NODES;
let redlockUrls = process.env.REDLOCK_URLS;
const needServer =
  topology === "cluster" ? !clusterNodes : topology === "sentinel" ? !process.env.REDIS_SENTINELS : !redisUrl;
if (needServer || !redlockUrls) {
  ensureSystemPackages([{ bin: "redis-server", pkg: "redis-server" }], { why: "no REDIS_URL set" });
}
try {
  if (topology === "cluster") clusterNodes ||= await localCluster();
  else if (topology === "sentinel") process.env.REDIS_SENTINELS ||= await localSentinels();
  else if (topology === "single") redisUrl ??= await localRedis(REDIS_PORT, "redis");
  if (!redlockUrls) {
    const urls = [];
    for (const [i, port] of REDLOCK_PORTS.entries()) urls.push(await localRedis(port, `redlock-${i + 1}`));
    redlockUrls = urls.join(",");
  }
} catch (err) {
  console.error(err);
  await shutdown(1);
}

/** PostgreSQL is optional: without it only the postgres mode is unavailable, so failures are warnings. */
async function localPostgres() {
  const installed = ensureSystemPackages([{ bin: "initdb", pkg: "postgresql", found: pgBinDir }], {
    why: "no DATABASE_URL set; the postgres mode needs it",
    optional: true,
  });
  if (!installed) {
    console.log(
      "[lockyard] PostgreSQL is not installed: the postgres mode will be unavailable.\n" +
        "  Install it (Debian/Ubuntu: sudo apt-get install -y postgresql) or set DATABASE_URL.",
    );
    return undefined;
  }
  try {
    const free = await isPortFree(PG_PORT);
    postgres = await startPostgres({
      port: free ? PG_PORT : undefined,
      dir: path.join(root, ".data", "pg"),
      persist: true,
    });
    console.log(
      `[lockyard] postgres: pid ${postgres.pid} at ${postgres.url}${free ? "" : ` (port ${PG_PORT} was busy)`}`,
    );
    return postgres.url;
  } catch (err) {
    console.log(
      `[lockyard] PostgreSQL did not start (${err.message}): the postgres mode will be unavailable.`,
    );
    return undefined;
  }
}
const databaseUrl = process.env.DATABASE_URL || (await localPostgres());

const browserApiUrls = API_PORTS.map((p) => `http://localhost:${p}`).join(",");
const nextBin = path.join(root, "node_modules/next/dist/bin/next");
const turboEnv = { NEXT_TELEMETRY_DISABLED: "1", TURBO_TELEMETRY_DISABLED: "1" };

// Production: everything built once. Dev: only what the API and the dashboard import, before the watchers.
console.log(dev ? "[lockyard] building the libraries and the API once…" : "[lockyard] building…");
const filters = dev ? ["--filter=@lockyard/api...", "--filter=@lockyard/ui"] : [];
const build = await exec("npx", ["turbo", "run", "build", ...filters, "--output-logs=errors-only"], {
  cwd: root,
  env: turboEnv,
});
if (build.code !== 0) {
  console.error("[lockyard] the build failed; see above.");
  await shutdown(1);
}
// A fresh clone had no built parser to ask before the build.
const builtProblem = await apiEnvProblem(root, apiEnvOf(0));
if (builtProblem) {
  console.error(`\n[lockyard] the API would refuse its environment: ${builtProblem}.\n`);
  await shutdown(1);
}

if (dev) {
  const tsc = path.join(root, "node_modules/typescript/bin/tsc");
  for (const [name, dir] of [
    ["lock", "packages/lock"],
    ["ui", "packages/ui"],
    ["api:tsc", "apps/api"],
  ]) {
    run(name, process.execPath, [tsc, "-p", "tsconfig.build.json", "--watch", "--preserveWatchOutput"], {
      cwd: path.join(root, dir),
      color: 90,
    });
  }
}
const services = [];
for (const [i, port] of API_PORTS.entries()) {
  // node --watch restarts on any change to a module it loaded, @lockyard/lock's dist included.
  const args = dev ? ["--watch", "--watch-preserve-output", "dist/server.js"] : ["dist/server.js"];
  const api = run(`api-${i + 1}`, process.execPath, args, {
    cwd: path.join(root, "apps/api"),
    env: {
      PORT: String(port),
      INSTANCE_ID: `api-${i + 1}`,
      ...(topology === "cluster"
        ? { REDIS_CLUSTER_NODES: clusterNodes }
        : topology === "sentinel"
          ? {
              REDIS_SENTINELS: process.env.REDIS_SENTINELS,
              REDIS_SENTINEL_NAME: process.env.REDIS_SENTINEL_NAME || "mymaster",
            }
          : { REDIS_URL: redisUrl }),
      REDLOCK_URLS: redlockUrls,
      DATABASE_URL: databaseUrl ?? "",
      API_URLS: apiUrls,
    },
    color: 33 + i,
  });
  services.push(api);
}
// Loopback only unless HOST says otherwise, like the API.
const web = run(
  "web",
  process.execPath,
  [nextBin, dev ? "dev" : "start", "-p", String(WEB_PORT), "-H", process.env.HOST || "127.0.0.1"],
  {
    cwd: path.join(root, "apps/web"),
    env: { API_URLS: browserApiUrls, NEXT_TELEMETRY_DISABLED: "1" },
    color: 35,
  },
);
services.push(web);

// Under node --watch (dev) a failed API does not exit: its watcher says so and waits for an edit.
const ended = dev ? Promise.race([firstExit(services), firstWatchFailure(services)]) : firstExit(services);
try {
  const listening = Promise.all([...API_PORTS, WEB_PORT].map((p) => waitForPort(p, { timeoutMs: 60_000 })));
  const early = await Promise.race([listening.then(() => null), ended]);
  if (early) {
    console.error(
      `\n[lockyard] ${describeExit(early, "while starting")}\n\nStopped everything; fix that and run npm start again.`,
    );
    await shutdown(1);
  }
} catch (err) {
  console.error(`[lockyard] ${err.message}`);
  await shutdown(1);
}
// After startup the rest keeps running, but a dead service is said, not left for the dashboard to show.
void ended.then((e) => {
  if (!shuttingDown) console.error(`\n[lockyard] ${describeExit(e, "")}; the others keep running.\n`);
});
console.log(`
  \x1b[1mLockyard is up${dev ? " in dev mode" : ""}.\x1b[0m
  Dashboard:  \x1b[4mhttp://localhost:${WEB_PORT}\x1b[0m
  API:        ${browserApiUrls.replaceAll(",", "  ")}   (tRPC at /trpc, /healthz, /readyz, /metrics)
  Redis:      ${topology === "cluster" ? `cluster ${clusterNodes}` : topology === "sentinel" ? `sentinel ${process.env.REDIS_SENTINEL_NAME || "mymaster"} via ${process.env.REDIS_SENTINELS}` : redisUrl}   Redlock nodes: ${redlockUrls}
  PostgreSQL: ${databaseUrl ? redact(databaseUrl) : "none (the postgres mode is unavailable)"}
  Ctrl-C stops everything started here.${dev ? "\n  Edits recompile: packages/lock, packages/ui and apps/api (the APIs restart), apps/web (hot reload)." : ""}
`);

/** A URL without its password, for the banner. */
function redact(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url;
  }
}
