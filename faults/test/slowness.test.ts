// Scenario 5: Redis stops answering for longer than the lease (CLIENT PAUSE WRITE, then DEBUG
// SLEEP) while one watchdog holder and three contenders keep locking. Never two holders.
import { setTimeout as sleep } from "node:timers/promises";
import { createLocks, type LockEvent, type Locks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertNoTwoHolders, figure } from "../src/figures.js";
import { recorded } from "../src/recorder.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";

const LEASE_MS = 300;
const PAUSE_MS = 900;
const WORKERS = 4;
let server: RedisServer;
let admin: Redis;
const clients: { rec: ReturnType<typeof recorded<Redis>>; locks: Locks; events: LockEvent[] }[] = [];

beforeAll(async () => {
  server = await startRedis({ args: ["--enable-debug-command", "local"] });
  admin = new Redis(server.url);
  for (let i = 0; i < WORKERS; i++) {
    const rec = recorded(new Redis(server.url), `worker-${i}`);
    const events: LockEvent[] = [];
    const locks = createLocks({
      redis: rec.redis,
      leaseMs: LEASE_MS,
      instanceId: `worker-${i}`,
      onEvent: (e) => events.push(e),
    });
    clients.push({ rec, locks, events });
  }
});
afterAll(async () => {
  for (const c of clients) {
    await c.locks.close();
    c.rec.redis.disconnect();
  }
  admin?.disconnect();
  await server?.stop();
});

async function contend(resource: string, untilMs: number) {
  const outcomes: Record<string, number> = {};
  const until = performance.now() + untilMs;
  await Promise.all(
    clients.map(async (c, i) => {
      while (performance.now() < until) {
        try {
          // Worker 0 holds long (its watchdog must carry it); the others hold briefly.
          await c.locks.withLock(resource, () => sleep(i === 0 ? 2 * LEASE_MS : 10 + Math.random() * 20), {
            waitMs: 2_000,
          });
          outcomes.ok = (outcomes.ok ?? 0) + 1;
        } catch (e) {
          const name = (e as Error).name;
          outcomes[name] = (outcomes[name] ?? 0) + 1;
        }
      }
    }),
  );
  return outcomes;
}

it.each([
  ["CLIENT PAUSE WRITE", () => admin.call("CLIENT", "PAUSE", String(PAUSE_MS), "WRITE")],
  ["DEBUG SLEEP", () => admin.call("DEBUG", "SLEEP", String(PAUSE_MS / 1000))],
])(`%s for ${PAUSE_MS} ms (lease ${LEASE_MS} ms) never yields two holders`, async (name, pause) => {
  const resource = `slow:${name.split(" ")[0]!.toLowerCase()}`;
  for (const c of clients) c.events.length = 0;
  const ops = clients.map((c) => c.rec.source().ops.length);
  const run = contend(resource, 3_000);
  await sleep(800);
  const pausedAt = performance.now();
  await pause();
  const outcomes = await run;
  const lost = clients.flatMap((c) => c.events.filter((e) => e.type === "lost" && e.resource === resource));
  figure(
    `slowness (${name} ${PAUSE_MS} ms, lease ${LEASE_MS} ms): ${outcomes.ok ?? 0} critical sections, ` +
      `${lost.length} holds reported lost, outcomes ${JSON.stringify(outcomes)}`,
  );
  expect(outcomes.ok).toBeGreaterThan(0);
  // The pause outlasts the lease: whoever held the lock then must have been told it lost it.
  expect(lost.length).toBeGreaterThan(0);
  expect(performance.now() - pausedAt).toBeGreaterThan(PAUSE_MS);
  const sources = clients.map((c, i) => {
    const s = c.rec.source();
    return { ...s, ops: s.ops.slice(ops[i]) };
  });
  assertNoTwoHolders(`slowness, ${name}`, sources);
});
