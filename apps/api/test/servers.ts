import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
// @ts-expect-error plain .mjs helper without types
import { freePort, waitForPort } from "../../../scripts/lib/ports.mjs";

const serverJs = fileURLToPath(new URL("../dist/server.js", import.meta.url));

export interface ApiProcess {
  instanceId: string;
  url: string;
  child: ChildProcess;
  output: () => string;
}

/** Starts `count` real API processes sharing one Redis, each knowing every instance's URL. */
export async function startApis(
  redisUrl: string,
  count: number,
  extraEnv: Record<string, string> = {},
): Promise<ApiProcess[]> {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freePort());
  const urls = ports.map((p) => `http://127.0.0.1:${p}`);
  const apis = ports.map((port, i) => {
    const instanceId = `it-api-${i + 1}`;
    let out = "";
    const child = spawn(process.execPath, [serverJs], {
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        HOST: "127.0.0.1",
        REDIS_URL: redisUrl,
        API_URLS: urls.join(","),
        INSTANCE_ID: instanceId,
        LOG_LEVEL: "warn",
        ...extraEnv,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (d) => {
      out += d;
    });
    child.stderr?.on("data", (d) => {
      out += d;
    });
    return { instanceId, url: urls[i]!, child, output: () => out };
  });
  await Promise.all(ports.map((p) => waitForPort(p, { timeoutMs: 15_000 })));
  return apis;
}

export async function stopApis(apis: ApiProcess[]): Promise<void> {
  await Promise.all(
    apis.map(
      (a) =>
        new Promise<void>((resolve) => {
          if (a.child.exitCode !== null || a.child.signalCode !== null) return resolve();
          a.child.once("exit", () => resolve());
          process.kill(a.child.pid!, "SIGTERM");
          setTimeout(() => {
            if (a.child.exitCode === null) process.kill(a.child.pid!, "SIGKILL");
          }, 5_000).unref();
        }),
    ),
  );
}
