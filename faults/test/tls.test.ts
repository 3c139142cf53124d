// Scenario 8b: rediss:// against a redis-server with a tls-port and certificates made by openssl
// for this run. The plain port stays open only for the harness's readiness check and for CLIENT
// LIST, which proves that the library's and the API's connections really came in over TLS.
import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { freePort } from "../../scripts/lib/ports.mjs";
import { type ApiProcess, startApis, stopApis } from "../src/apis.js";
import { makeCerts, type TestCerts } from "../src/certs.js";
import { figure } from "../src/figures.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";
import { apiWorkload, libraryWorkload } from "../src/workload.js";

let certs: TestCerts;
let server: RedisServer;
let tlsPort: number;
let admin: Redis;
let apis: ApiProcess[] = [];

beforeAll(async () => {
  certs = makeCerts();
  tlsPort = await freePort();
  server = await startRedis({
    args: [
      "--tls-port",
      String(tlsPort),
      "--tls-cert-file",
      certs.cert,
      "--tls-key-file",
      certs.key,
      "--tls-ca-cert-file",
      certs.ca,
      "--tls-auth-clients",
      "no",
    ],
  });
  admin = new Redis(server.url);
});
afterAll(async () => {
  await stopApis(apis);
  admin?.disconnect();
  await server?.stop();
  certs?.remove();
});

/** The local port each named connection reached, from CLIENT LIST. */
async function portsByName(): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  for (const line of ((await admin.call("CLIENT", "LIST")) as string).split("\n")) {
    const name = /\bname=(\S*)/.exec(line)?.[1];
    const port = /\bladdr=\S+:(\d+)/.exec(line)?.[1];
    if (!name || !port) continue;
    out.set(name, (out.get(name) ?? new Set()).add(port));
  }
  return out;
}

it("the library and two API instances work over rediss:// (TLS) with a test CA", async () => {
  const url = `rediss://127.0.0.1:${tlsPort}`;
  const redis = new Redis(url, { tls: { ca: readFileSync(certs.ca) }, connectionName: "tls-lib" });
  let lib: string[];
  let libPorts: Set<string> | undefined;
  try {
    lib = await libraryWorkload(redis, "tls");
    libPorts = (await portsByName()).get("tls-lib");
  } finally {
    redis.disconnect();
  }
  // The API takes no CA option: Node's NODE_EXTRA_CA_CERTS makes the test CA trusted, as in production.
  apis = await startApis(url, 2, {
    NODE_EXTRA_CA_CERTS: certs.ca,
    JOB_INTERVAL_MS: "3600000",
    ORDER_PROCESSING_MS: "10",
    LOG_LEVEL: "fatal",
  });
  const api = await apiWorkload(apis, "tls");
  const ports = await portsByName();
  const apiPorts = apis.map((a) => ports.get(a.instanceId));
  figure(
    `tls: library (${lib.length} features) and 2 API instances (${api.filter((s) => / 200$/.test(s)).length}/${api.length} calls ok) over rediss:// on tls-port ${tlsPort}`,
  );
  expect(lib).toEqual([
    "watchdog renewal",
    "re-entry",
    "list",
    "handed over to a waiter",
    "fenced write",
    "release",
  ]);
  expect(api.filter((s) => !/ 200$/.test(s))).toEqual([]);
  expect([...(libPorts ?? [])]).toEqual([String(tlsPort)]);
  for (const p of apiPorts) expect([...(p ?? [])]).toEqual([String(tlsPort)]);
});

it("a client that does not trust the server's CA is refused", async () => {
  const redis = new Redis(`rediss://127.0.0.1:${tlsPort}`, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  const errors: string[] = [];
  redis.on("error", (e: Error) => errors.push(e.message));
  const connected = await redis.connect().then(
    () => true,
    () => false,
  );
  redis.disconnect();
  expect(connected).toBe(false);
  expect(errors.join("; ")).toMatch(/self[- ]signed|unable to verify|certificate/i);
});
