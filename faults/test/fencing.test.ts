// Scenario 1: a GC pause. The holder is a child process, SIGSTOPped past its lease; another client
// acquires and writes; the holder is SIGCONTed and writes with its old token, then releases.
import { createLocks, fencedWrite, type Locks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Holder } from "../src/child.js";
import { assertNoTwoHolders, figure } from "../src/figures.js";
import { recorded } from "../src/recorder.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";

const RUNS = 20;
const LEASE_MS = 300;
let server: RedisServer;
let holder: Holder;
let admin: Redis;
let b: ReturnType<typeof recorded<Redis>>;
let locks: Locks;

beforeAll(async () => {
  server = await startRedis();
  admin = new Redis(server.url);
  holder = await Holder.start("paused-holder", { redisUrl: server.url, leaseMs: LEASE_MS });
  b = recorded(new Redis(server.url), "next-holder");
  locks = createLocks({ redis: b.redis, leaseMs: LEASE_MS, instanceId: "next-holder" });
});
afterAll(async () => {
  await holder?.stop();
  await locks?.close();
  b?.redis.disconnect();
  admin?.disconnect();
  await server?.stop();
});

it(`a holder paused past its lease: its fenced write is rejected and its release deletes nothing, ${RUNS}/${RUNS}`, async () => {
  const resource = "stock:gc";
  const stock = "stock:{gc}";
  await admin.hset(stock, "qty", 1000, "fence", 0);
  let rejected = 0;
  let untouched = 0;
  let knewItLost = 0;
  for (let i = 0; i < RUNS; i++) {
    const a = await holder.call("acquire", { resource, opts: {} });
    holder.signal("SIGSTOP");
    const next = await locks.acquire(resource, { waitMs: 5_000 });
    expect(next.token).toBeGreaterThan(a.token as number);
    expect(await fencedWrite(b.redis, stock, next.token!, -1)).toMatchObject({ ok: true });
    holder.signal("SIGCONT");
    const write = await holder.call("write", { key: stock, delta: -1 });
    const release = await holder.call("release");
    const stillThere = await admin.hget(`lock:{${resource}}`, next.owner);
    if ((write.result as { ok: boolean; reason?: string }).reason === "STALE") rejected++;
    if (release.result === "not-owner" && stillThere === "1") untouched++;
    if (write.isHeld === false) knewItLost++;
    await next.release();
  }
  figure(
    `fencing: ${rejected}/${RUNS} stale writes rejected, ${untouched}/${RUNS} stale releases deleted nothing`,
  );
  figure(`fencing: the paused holder saw isHeld() = false before writing in ${knewItLost}/${RUNS} runs`);
  expect(rejected).toBe(RUNS);
  expect(untouched).toBe(RUNS);
  // Only the current holders' writes landed.
  expect(await admin.hget(stock, "qty")).toBe(String(1000 - RUNS));
  assertNoTwoHolders("fencing", [holder.source(), b.source()]);
});
