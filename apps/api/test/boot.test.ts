// The API refusing to start says why in one line and exits 1; `npm start` shows that line when an instance dies.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ApiProcess, startApis, stopApis } from "./servers.js";

const serverJs = fileURLToPath(new URL("../dist/server.js", import.meta.url));

function runServer(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    let stderr = "";
    const child = spawn(process.execPath, [serverJs], {
      env: { PATH: process.env.PATH, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

let apis: ApiProcess[];
beforeAll(async () => {
  apis = await startApis(inject("redisUrl"), 1, { JOB_INTERVAL_MS: "3600000" });
});
afterAll(() => stopApis(apis ?? []));

describe("starting with what cannot work", () => {
  it("names every bad variable in one line, without a stack, and exits 1", async () => {
    const r = await runServer({ REDIS_URL: "garbage", LOCK_LEASE_MS: "abc" });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/invalid environment: .*REDIS_URL: .*LOCK_LEASE_MS: /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("says the port is taken and what to do, and exits 1", async () => {
    const port = new URL(apis[0]!.url).port;
    const r = await runServer({ PORT: port, REDIS_URL: inject("redisUrl") });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`port ${port} is already in use`);
    expect(r.stderr).toMatch(/set PORT to a free port/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // The instance that has the port is untouched.
    expect((await fetch(`${apis[0]!.url}/healthz`)).status).toBe(200);
  });
});

describe("paths that are no route", () => {
  it("answers { message } under /api, as every /api error does, and { error } elsewhere", async () => {
    for (const path of ["/api", "/api?x=1", "/api/nope"]) {
      const res = await fetch(`${apis[0]!.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(Object.keys((await res.json()) as object), path).toEqual(["message"]);
    }
    const other = await fetch(`${apis[0]!.url}/nope`);
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ error: "not found" });
  });
});
