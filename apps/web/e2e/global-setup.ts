import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startCluster } from "../../../scripts/lib/cluster.mjs";
import { freePort } from "../../../scripts/lib/ports.mjs";
import { startPostgres } from "../../../scripts/lib/postgres.mjs";
import { startRedis } from "../../../scripts/lib/redis.mjs";
import { logDir, screenshotDir, stackFile } from "./harness/paths";
import { startApi, startOtlpSink, startWeb, stopPid, waitForHttp } from "./harness/processes";
import type { Stack } from "./harness/stack";

/**
 * Starts real servers on free loopback ports: one Redis, three Redis nodes for Redlock, one PostgreSQL
 * (initdb into a temp dir), two API instances and the built dashboard. PIDs go to e2e/.logs/stack.json for globalTeardown.
 */
export default async function globalSetup(): Promise<void> {
  mkdirSync(logDir, { recursive: true });
  mkdirSync(screenshotDir, { recursive: true });
  const stack: Stack = {
    redisUrl: "",
    redisPort: 0,
    redisClusterNodes: [],
    redlockUrls: [],
    databaseUrl: "",
    apiUrls: [],
    otlpUrl: "",
    webUrl: "",
    spareWebPort: 0,
    pids: [],
    dirs: [],
  };
  const save = () => writeFileSync(stackFile, JSON.stringify(stack, null, 2));
  try {
    if (process.env.E2E_REDIS_TOPOLOGY === "cluster") {
      // The same specs against a Redis Cluster: 3 masters, one replica each (playwright.cluster.config.ts).
      const cluster = await startCluster({ masters: 3, replicas: 1 });
      for (const s of cluster.servers) {
        stack.pids.push({ name: `redis-${s.port}`, pid: s.pid as number });
        stack.dirs.push(s.dir);
      }
      stack.redisClusterNodes = cluster.nodes.map((n) => `${n.host}:${n.port}`);
      stack.redisUrl = `redis://127.0.0.1:${cluster.nodes[0]!.port}`;
      stack.redisPort = cluster.nodes[0]!.port;
    } else {
      const redis = await startRedis();
      stack.pids.push({ name: "redis", pid: redis.pid as number });
      stack.dirs.push(redis.dir);
      stack.redisUrl = redis.url;
      stack.redisPort = redis.port;
    }
    for (let i = 0; i < 3; i++) {
      const node = await startRedis();
      stack.pids.push({ name: `redlock-${i}`, pid: node.pid as number });
      stack.dirs.push(node.dir);
      stack.redlockUrls.push(node.url);
    }
    const pg = await startPostgres();
    stack.pids.push({ name: "postgres", pid: pg.pid as number });
    stack.dirs.push(pg.dir, pgSocketDir(pg.dir));
    stack.databaseUrl = pg.url;
    save();

    const [apiA, apiB, web, spare] = [await freePort(), await freePort(), await freePort(), await freePort()];
    stack.apiUrls = [`http://127.0.0.1:${apiA}`, `http://127.0.0.1:${apiB}`];
    stack.webUrl = `http://127.0.0.1:${web}`;
    stack.spareWebPort = spare;
    const webOrigins = [web, spare].flatMap((p) => [`http://127.0.0.1:${p}`, `http://localhost:${p}`]);
    const otlpPort = await freePort();
    stack.otlpUrl = `http://127.0.0.1:${otlpPort}`;
    const sink = startOtlpSink(otlpPort);
    stack.pids.push({ name: "otlp-sink", pid: sink.pid as number });
    await waitForHttp(`${stack.otlpUrl}/healthz`, sink);

    const apis = [
      { id: "api-a", port: apiA },
      { id: "api-b", port: apiB },
    ].map(({ id, port }) => {
      const child = startApi({
        port,
        instanceId: id,
        redisUrl: stack.redisUrl,
        redisClusterNodes: stack.redisClusterNodes,
        redlockUrls: stack.redlockUrls,
        databaseUrl: stack.databaseUrl,
        apiUrls: stack.apiUrls,
        webOrigins,
        otlpEndpoint: stack.otlpUrl,
      });
      stack.pids.push({ name: id, pid: child.pid as number });
      return { child, url: `http://127.0.0.1:${port}` };
    });
    const webChild = startWeb("web", web, stack.apiUrls);
    stack.pids.push({ name: "web", pid: webChild.pid as number });
    save();

    await Promise.all([
      ...apis.map((a) => waitForHttp(`${a.url}/healthz`, a.child)),
      waitForHttp(stack.webUrl, webChild, 60_000),
    ]);
    if (stack.redisClusterNodes.length > 0) await assertOnCluster(stack.apiUrls);
  } catch (err) {
    for (const p of stack.pids.reverse()) await stopPid(p.pid);
    throw new Error(`e2e stack failed to start (logs in ${logDir}): ${(err as Error).message}`);
  }
  save();
  process.env.E2E_WEB_URL = stack.webUrl;
}

/** The server's socket directory (line 5 of postmaster.pid), so globalTeardown removes it too. */
function pgSocketDir(dataDir: string): string {
  const line = readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[4]?.trim();
  // Only ever a directory startPostgres made; anything else falls back to the data dir (removed anyway).
  return line?.includes("lockyard-pgsock-") ? line : dataDir;
}

/** The cluster run proves nothing if an API quietly used one Redis: each must say it runs on the Cluster. */
async function assertOnCluster(apiUrls: string[]): Promise<void> {
  for (const url of apiUrls) {
    const res = await fetch(`${url}/trpc/system.info`);
    const body = (await res.json()) as {
      result?: { data?: { redis?: { mode?: string; masters?: number } } };
    };
    const redis = body.result?.data?.redis;
    if (redis?.mode !== "cluster" || redis.masters !== 3) {
      throw new Error(`${url} does not run on the 3-master Cluster: ${JSON.stringify(redis)}`);
    }
  }
}
