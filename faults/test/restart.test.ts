// Scenario 3: redis-server is SIGKILLed and restarted in the middle of a 200-request burst through
// two API instances (AOF with fsync always, so stock, fences and locks survive the restart).
import { setTimeout as sleep } from "node:timers/promises";
import { createLocks, type Locks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ApiProcess, startApis, stopApis, type TrpcReply, trpc } from "../src/apis.js";
import { assertNoTwoHolders, figure } from "../src/figures.js";
import { recorded } from "../src/recorder.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";

const REQUESTS = 200;
const INITIAL = 100;
// Fail fast like the API's own connections, and reconnect quickly.
const failFast = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  retryStrategy: (n: number) => Math.min(20 * n, 200),
};

let server: RedisServer;
let apis: ApiProcess[];
let admin: Redis;

beforeAll(async () => {
  server = await startRedis({ args: ["--appendonly", "yes", "--appendfsync", "always"] });
  admin = new Redis(server.url, { retryStrategy: () => 50 });
  admin.on("error", () => {});
  apis = await startApis(server.url, 2, { JOB_INTERVAL_MS: "3600000", LOG_LEVEL: "fatal" });
});
afterAll(async () => {
  await stopApis(apis ?? []);
  admin?.disconnect();
  await server?.stop();
});

/** Three library clients locking one resource in a loop, for the no-two-holders checker. */
function lockLoop(url: string, untilMs: number) {
  const clients = Array.from({ length: 3 }, (_, i) => {
    const rec = recorded(new Redis(url, failFast), `loop-${i}`);
    rec.redis.on("error", () => {});
    return {
      rec,
      locks: createLocks({
        redis: rec.redis,
        leaseMs: 400,
        instanceId: `loop-${i}`,
      }) as Locks,
    };
  });
  const errors: Record<string, number> = {};
  const until = performance.now() + untilMs;
  const done = Promise.all(
    clients.map(async (c) => {
      while (performance.now() < until) {
        try {
          await c.locks.withLock("restart:loop", () => sleep(5 + Math.random() * 10), { waitMs: 1_000 });
        } catch (e) {
          errors[(e as Error).name] = (errors[(e as Error).name] ?? 0) + 1;
          await sleep(20);
        }
      }
    }),
  );
  return {
    errors,
    done,
    sources: () => clients.map((c) => c.rec.source()),
    close: async () => {
      for (const c of clients) {
        await c.locks.close();
        c.rec.redis.disconnect();
      }
    },
  };
}

async function servedAgain(url: string, productId: string, since: number): Promise<number> {
  for (;;) {
    const r = await trpc(url, "stock.get", { productId }, { method: "GET" }).catch(() => null);
    if (r?.status === 200) return performance.now() - since;
    await sleep(20);
  }
}

it(`kill and restart redis-server during a ${REQUESTS}-request burst through two API instances`, async () => {
  const productId = "restart-1";
  await admin.hset(`stock:{${productId}}`, "qty", INITIAL, "fence", 0);
  const fenceBefore = Number((await admin.get("fence:{restart:loop}")) ?? 0);
  const loop = lockLoop(server.url, 3_000);

  const replies: Promise<TrpcReply & { at: number }>[] = [];
  const firing = (async () => {
    for (let i = 0; i < REQUESTS; i++) {
      const api = apis[i % 2]!;
      replies.push(
        trpc(api.url, "stock.deduct", { productId, mode: "redis", workMs: 5 }).then((r) => ({
          ...r,
          at: performance.now(),
        })),
      );
      await sleep(15);
    }
  })();
  await sleep(600);
  await server.kill("SIGKILL");
  await sleep(1_000);
  await server.restart();
  const backAt = performance.now();
  const recovery = await Promise.all(apis.map((a) => servedAgain(a.url, productId, backAt)));
  await firing;
  const all = await Promise.all(replies);
  await loop.done;
  const fenceAfter = Number(await admin.get("fence:{restart:loop}"));
  await loop.close();

  const ok = all.filter((r) => r.status === 200 && r.data?.ok === true);
  const soldOut = all.filter((r) => r.status === 200 && r.data?.reason === "sold-out");
  const unavailable = all.filter((r) => r.status === 503 && r.code === "SERVICE_UNAVAILABLE");
  // A 503 that says the write may have been applied: the only answers allowed to hide a decrement.
  const unknown = unavailable.filter((r) => /may have been applied/.test(r.message ?? ""));
  const other = all.filter(
    (r) => r.status !== 200 && !(r.status === 503 && r.code === "SERVICE_UNAVAILABLE"),
  );
  const finalQty = Number(await admin.hget(`stock:{${productId}}`, "qty"));
  const lowest = Math.min(
    finalQty,
    ...all.map((r) => (typeof r.data?.stock === "number" ? r.data.stock : INITIAL)),
  );
  const firstSaleAfter = Math.min(...ok.map((r) => r.at).filter((t) => t > backAt)) - backAt;
  const crashed = apis.filter((a) => a.child.exitCode !== null || a.child.signalCode !== null);
  figure(
    `redis restart: ${REQUESTS} requests → ${ok.length} sold, ${soldOut.length} sold out, ${unavailable.length} SERVICE_UNAVAILABLE ` +
      `(${unknown.length} saying the write may have been applied), ` +
      `${other.length} other; final stock ${finalQty}, lowest ${lowest}, oversold ${Math.max(0, ok.length - INITIAL)}; ` +
      `${crashed.length} API crashes; served again ${recovery.map((ms) => Math.round(ms)).join(" / ")} ms after Redis returned, ` +
      `first locked sale ${Math.round(firstSaleAfter)} ms after (a lock whose holder died with Redis expires first)`,
  );
  expect(crashed).toEqual([]);
  expect(other).toEqual([]);
  expect(unavailable.length).toBeGreaterThan(0);
  expect(ok.length).toBeLessThanOrEqual(INITIAL);
  expect(finalQty).toBeGreaterThanOrEqual(0);
  expect(lowest).toBeGreaterThanOrEqual(0);
  // Every success took one unit; anything else taken belongs to a request told its outcome is unknown.
  const taken = INITIAL - finalQty;
  expect(taken).toBeGreaterThanOrEqual(ok.length);
  expect(taken - ok.length).toBeLessThanOrEqual(unknown.length);
  for (const ms of recovery) expect(ms).toBeLessThan(2_000);
  assertNoTwoHolders("redis restart", loop.sources(), {
    "lock:{restart:loop}": { before: fenceBefore, after: fenceAfter },
  });
});

it("a restart that loses the data: watchdog holders are told their locks are lost, and nothing re-creates them", async () => {
  const volatile = await startRedis();
  const rec = recorded(new Redis(volatile.url, failFast), "volatile");
  rec.redis.on("error", () => {});
  const check = new Redis(volatile.url, { retryStrategy: () => 50 });
  check.on("error", () => {});
  const locks = createLocks({ redis: rec.redis, leaseMs: 800, instanceId: "volatile" });
  try {
    await new Promise((r) => rec.redis.once("ready", r));
    const handles = await Promise.all([1, 2, 3].map((i) => locks.acquire(`volatile:${i}`)));
    const inside = locks.withLock("volatile:scope", () => sleep(1_500));
    await sleep(100);
    await volatile.kill("SIGKILL");
    await sleep(150);
    await volatile.restart();
    const result = await inside.then(
      () => "resolved",
      (e: Error) => e.name,
    );
    await sleep(800);
    const reasons = handles.map((h) =>
      h.signal.aborted ? (h.signal.reason as { reason: string }).reason : "held",
    );
    const recreated = await check.exists(
      ...[1, 2, 3].map((i) => `lock:{volatile:${i}}`),
      "lock:{volatile:scope}",
    );
    figure(
      `redis restart without persistence: 4/4 watchdog holds signalled lost (${[...new Set(reasons)].join(", ")}; withLock → ${result}), ${recreated} keys re-created`,
    );
    expect(result).toBe("LockLostError");
    for (const h of handles) expect(h.isHeld()).toBe(false);
    expect(reasons.every((r) => r === "renew-refused" || r === "deadline")).toBe(true);
    expect(recreated).toBe(0);
  } finally {
    await locks.close();
    rec.redis.disconnect();
    check.disconnect();
    await volatile.stop();
  }
});
