// The API on Redis Sentinel: two API instances find their primary through three Sentinels (REDIS_SENTINELS,
// REDIS_SENTINEL_NAME; REDIS_URL points nowhere), a `redis`-mode burst runs across both, and the primary is
// SIGKILLed while it runs. Sentinel promotes the replica. Required: every request answers (a sale, sold out,
// or a 503 that says Redis was unavailable), no unit is sold beyond the stock, both instances sell again after
// the failover without a restart, and neither crashes. (What a failover may lose with asynchronous replication,
// and how fencing and WAIT bound it, is sentinel-failover.test.ts: this one is about the API following it.)
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type SentinelGroup, startSentinelGroup } from "../../scripts/lib/sentinel.mjs";
import {
  type ApiProcess,
  byAnswer,
  sellsAgain,
  startApis,
  stopApis,
  type TrpcReply,
  trpc,
} from "../src/apis.js";
import { figure } from "../src/figures.js";

const REQUESTS = 120;
const INITIAL = 60;
const DOWN_AFTER_MS = 1_000;

let group: SentinelGroup;
let apis: ApiProcess[];

beforeAll(async () => {
  group = await startSentinelGroup({ downAfterMs: DOWN_AFTER_MS, failoverTimeoutMs: 2_000 });
  apis = await startApis("redis://127.0.0.1:1", 2, {
    REDIS_SENTINELS: group.sentinels.map((s) => `${s.host}:${s.port}`).join(","),
    REDIS_SENTINEL_NAME: group.name,
    JOB_INTERVAL_MS: "3600000",
    // Info: the connection transitions ("redis unavailable", "redis reachable again") for a failure's message.
    LOG_LEVEL: "info",
  });
}, 90_000);

afterAll(async () => {
  await stopApis(apis ?? []);
  await group?.stop();
});

async function redisOf(api: ApiProcess): Promise<unknown> {
  const r = await trpc(api.url, "system.info", undefined, { method: "GET" });
  return r.data?.redis;
}

/** Until the Sentinels name another primary than `port`: ms after `since`. */
async function switchedAfter(port: number, since: number): Promise<number> {
  for (;;) {
    const addr = await group.masterAddr().catch(() => null);
    if (addr && addr.port !== port) return performance.now() - since;
    await sleep(50);
  }
}

it(`the API follows a Sentinel failover: SIGKILL of the primary during a ${REQUESTS}-request burst`, async () => {
  const productId = `sentinel-api-${Date.now()}`;
  // Both instances reach Redis through the Sentinels only.
  for (const api of apis)
    expect((await trpc(api.url, "stock.reset", { productId, qty: INITIAL })).status).toBe(200);
  // What the dashboard's header shows: the primary behind the Sentinels, and its replica.
  for (const api of apis)
    expect(await redisOf(api)).toMatchObject({
      mode: "sentinel",
      masters: 1,
      replicas: 1,
      nodes: [{ address: `127.0.0.1:${group.primary.port}`, role: "master" }, { role: "replica" }],
    });
  const replies: Promise<TrpcReply & { at: number }>[] = [];
  const firing = (async () => {
    for (let i = 0; i < REQUESTS; i++) {
      replies.push(
        trpc(apis[i % 2]!.url, "stock.deduct", { productId, mode: "redis", workMs: 5 })
          .catch((e: Error) => ({ status: 0, message: e.message }) as TrpcReply)
          .then((r) => ({ ...r, at: performance.now() })),
      );
      await sleep(15);
    }
  })();
  await sleep(500);
  const oldPort = group.primary.port;
  await group.primary.kill("SIGKILL");
  const killedAt = performance.now();
  const switchMs = await switchedAfter(oldPort, killedAt);
  // Without a restart, within seconds of the switch (ioredis asks the Sentinels on every reconnect).
  const sellAgainMs = await Promise.all(
    apis.map((a, i) => sellsAgain(a, `${productId}-after-${i}`, killedAt, switchMs + 15_000)),
  );
  await firing;
  const all = await Promise.all(replies);

  const addr = await group.masterAddr();
  // And after the failover, the new primary (the killed one is no replica of it yet).
  for (const api of apis)
    expect(await redisOf(api)).toMatchObject({
      mode: "sentinel",
      replicas: 0,
      nodes: [{ address: `127.0.0.1:${addr.port}`, role: "master" }],
    });
  const primary = new Redis(addr.port, addr.host);
  const finalQty = Number(await primary.hget(`stock:{${productId}}`, "qty"));
  primary.disconnect();
  const { ok, soldOut, unavailable, other } = byAnswer(all);
  const crashed = apis.filter((a) => a.child.exitCode !== null || a.child.signalCode !== null);
  figure(
    `sentinel API: ${REQUESTS} requests through two API instances on REDIS_SENTINELS → ${ok.length} sold, ` +
      `${soldOut.length} sold out, ${unavailable.length} × 503, ${other.length} other; final stock ${finalQty}; ` +
      `primary SIGKILLed, Sentinels named the new one ${Math.round(switchMs)} ms after (down-after ` +
      `${DOWN_AFTER_MS} ms); each API sold again ${sellAgainMs.map((ms) => Math.round(ms)).join(" / ")} ms after ` +
      `the kill; ${crashed.length} API crashes`,
  );
  expect(other.map((r) => `${r.status} ${r.code ?? ""} ${r.message ?? ""}`)).toEqual([]);
  expect(ok.length).toBeLessThanOrEqual(INITIAL);
  expect(finalQty).toBeGreaterThanOrEqual(0);
  expect(ok.length + finalQty).toBeLessThanOrEqual(INITIAL);
  expect(crashed).toEqual([]);
}, 120_000);
