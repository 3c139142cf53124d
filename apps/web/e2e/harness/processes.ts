import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import path from "node:path";
import { apiServer, logDir, nextBin, webDir } from "./paths";

/** Spawns a server with its output in e2e/.logs/<name>.log (read it when a spec fails). */
function spawnLogged(name: string, args: string[], env: Record<string, string>, cwd: string): ChildProcess {
  mkdirSync(logDir, { recursive: true });
  const log = createWriteStream(path.join(logDir, `${name}.log`));
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  return child;
}

export interface ApiOptions {
  port: number;
  instanceId: string;
  redisUrl: string;
  /** Seed nodes (host:port) of a Redis Cluster: set, the API uses the Cluster and not redisUrl. */
  redisClusterNodes?: string[];
  redlockUrls: string[];
  /** PostgreSQL for the postgres mode; without it the mode shows as unavailable. */
  databaseUrl?: string;
  apiUrls: string[];
  webOrigins: string[];
  /** The stand-in collector (otlp-sink.mjs): the stack's APIs export their traces as a traced deployment's do. */
  otlpEndpoint?: string;
}

export function startApi(o: ApiOptions): ChildProcess {
  return spawnLogged(
    o.instanceId,
    [apiServer],
    {
      PORT: String(o.port),
      HOST: "127.0.0.1",
      REDIS_URL: o.redisUrl,
      REDIS_CLUSTER_NODES: (o.redisClusterNodes ?? []).join(","),
      REDLOCK_URLS: o.redlockUrls.join(","),
      // Set explicitly, even to nothing, so a DATABASE_URL in the runner's environment never leaks in.
      DATABASE_URL: o.databaseUrl ?? "",
      INSTANCE_ID: o.instanceId,
      API_URLS: o.apiUrls.join(","),
      WEB_ORIGINS: o.webOrigins.join(","),
      // The default job cadence (5 s), so the idle-CPU spec measures the page as a user would see it.
      JOB_INTERVAL_MS: "5000",
      ORDER_PROCESSING_MS: "300",
      LOG_LEVEL: "warn",
      // Set explicitly, as DATABASE_URL: "" is no telemetry.
      OTEL_EXPORTER_OTLP_ENDPOINT: o.otlpEndpoint ?? "",
    },
    webDir,
  );
}

/** The stand-in OTLP collector the APIs export to; a spec reads a trace back from it (GET /traces/<id>). */
export function startOtlpSink(port: number): ChildProcess {
  return spawnLogged("otlp-sink", [path.join(webDir, "e2e/harness/otlp-sink.mjs"), String(port)], {}, webDir);
}

export function startWeb(name: string, port: number, apiUrls: string[]): ChildProcess {
  return spawnLogged(
    name,
    [nextBin, "start", "-p", String(port), "-H", "127.0.0.1"],
    { API_URLS: apiUrls.join(","), NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
    webDir,
  );
}

/** Polls until `url` answers 2xx, failing early if the process behind it exits. */
export async function waitForHttp(url: string, child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with code ${child.exitCode}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL if the process is still there after graceMs. */
export async function stopPid(pid: number | undefined, graceMs = 3000): Promise<void> {
  if (!pid || !alive(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  const deadline = performance.now() + graceMs;
  while (performance.now() < deadline) {
    if (!alive(pid)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    process.kill(pid, "SIGKILL");
  } catch {}
}
