import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { repoPath } from "./repo.js";

export const apiServerPath = (): string => repoPath("apps/api/dist/server.js");

export interface ApiInstances {
  urls: string[];
  pids: (number | undefined)[];
  stop(): Promise<void>;
}

async function waitHealthy(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`API at ${url} exited with code ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {}
    await sleep(100);
  }
  throw new Error(`API at ${url} did not answer /healthz within ${timeoutMs} ms`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.pid && process.kill(child.pid, "SIGKILL"), 3_000);
    kill.unref();
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    if (child.pid) process.kill(child.pid, "SIGTERM");
  });
}

/** Starts `count` API instances on the given ports against one Redis, as `npm start` does, and stops them by PID. */
export async function startApi(
  redisUrl: string,
  ports: number[],
  opts: { server?: string; env?: Record<string, string> } = {},
): Promise<ApiInstances> {
  const server = opts.server ?? apiServerPath();
  if (!existsSync(server)) throw new Error(`${server} is missing: build the API first`);
  const urls = ports.map((p) => `http://127.0.0.1:${p}`);
  const children = ports.map((port, i) =>
    spawn(process.execPath, [server], {
      stdio: ["ignore", "ignore", "inherit"],
      env: {
        ...process.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        REDIS_URL: redisUrl,
        API_URLS: urls.join(","),
        INSTANCE_ID: `bench-api-${i + 1}`,
        LOG_LEVEL: "warn",
        ...opts.env,
      },
    }),
  );
  const stop = async () => {
    await Promise.all(children.map(stopChild));
  };
  try {
    await Promise.all(urls.map((u, i) => waitHealthy(u, children[i]!, 20_000)));
  } catch (err) {
    await stop();
    throw err;
  }
  return { urls, pids: children.map((c) => c.pid), stop };
}
