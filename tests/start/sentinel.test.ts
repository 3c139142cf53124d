// `REDIS_TOPOLOGY=sentinel npm start` with no REDIS_SENTINELS: the start script provisions a primary, a replica
// and three Sentinels, both APIs find the primary through them, the dashboard's system info says so and follows
// a failover (the primary SIGKILLed: the Sentinels promote the replica), and Ctrl-C stops every process it
// started, the Sentinels included. Runs scripts/start.mjs in this checkout (built by npm test before this).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { freePort } from "../../scripts/lib/ports.mjs";
import { cleanEnv, type Stack, startStack } from "../lib-start.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
let stack: Stack;
let webPort = 0;
let apiPorts: number[] = [];

beforeAll(async () => {
  webPort = await freePort();
  apiPorts = [await freePort(), await freePort()];
  stack = startStack(process.execPath, ["scripts/start.mjs"], root, {
    ...cleanEnv(),
    REDIS_TOPOLOGY: "sentinel",
    // Not this test's subject: the postgres mode stays unavailable rather than provisioning PostgreSQL.
    DATABASE_URL: "postgres://lockyard@127.0.0.1:1/lockyard",
    WEB_PORT: String(webPort),
    API_PORTS: apiPorts.join(","),
  });
  await stack.waitFor(
    "the 'Lockyard is up' banner",
    () => stack.output().includes("Lockyard is up"),
    600_000,
  );
}, 630_000);

afterAll(() => {
  stack?.kill();
});

interface RedisInfo {
  mode: string;
  replicas: number;
  nodes: { address: string; role: string }[];
}
async function redisOf(port: number): Promise<RedisInfo> {
  const res = await fetch(`http://127.0.0.1:${port}/trpc/system.info`);
  return ((await res.json()) as { result: { data: { redis: RedisInfo } } }).result.data.redis;
}

describe("REDIS_TOPOLOGY=sentinel npm start, with no Sentinels given", () => {
  it("provisions a primary, a replica and three Sentinels, and both APIs run on that primary", async () => {
    const names = stack.started().map((s) => s.name);
    expect(names.filter((n) => n === "sentinel")).toHaveLength(3);
    expect(names).toEqual(expect.arrayContaining(["primary", "replica"]));
    const primary = stack.started().find((s) => s.name === "primary")!;
    const sentinels = stack.started().filter((s) => s.name === "sentinel");
    expect(stack.output()).toMatch(
      new RegExp(
        `Redis:\\s+sentinel \\S+ via ${sentinels.map((s) => `127\\.0\\.0\\.1:${s.port}`).join(",")}\\s`,
      ),
    );
    for (const port of apiPorts) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ ok: true, checks: { redis: "up" } });
      expect(await redisOf(port)).toMatchObject({
        mode: "sentinel",
        replicas: 1,
        nodes: [{ address: `127.0.0.1:${primary.port}`, role: "master" }, { role: "replica" }],
      });
    }
  });

  it("follows a failover: the primary killed, both APIs report the promoted replica", async () => {
    const primary = stack.started().find((s) => s.name === "primary")!;
    const replica = stack.started().find((s) => s.name === "replica")!;
    process.kill(primary.pid, "SIGKILL");
    // Down-after 2 s, then the Sentinels' election; ioredis asks them again on reconnect.
    for (const port of apiPorts)
      await stack.waitFor(
        `api on ${port} to report the replica as primary`,
        async () => {
          const info = await redisOf(port).catch(() => undefined);
          return info?.nodes[0]?.address === `127.0.0.1:${replica.port}`;
        },
        30_000,
      );
  }, 40_000);

  it("stops everything it started on Ctrl-C, the Sentinels included", async () => {
    const { listening, alive } = await stack.interrupt([webPort, ...apiPorts]);
    expect(listening, "ports still listening").toEqual([]);
    expect(alive).toEqual([]);
  }, 60_000);
});
