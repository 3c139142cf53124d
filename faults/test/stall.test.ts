// Scenario 4: the holder's event loop is blocked for longer than the lease. The lock must be
// reported lost, and the watchdog must not bring it back afterwards.
import { setTimeout as sleep } from "node:timers/promises";
import { createLocks, type Locks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Holder } from "../src/child.js";
import { assertNoTwoHolders, figure } from "../src/figures.js";
import { recorded } from "../src/recorder.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";

const LEASE_MS = 300;
const STALL_MS = 700;
let server: RedisServer;
let admin: Redis;
let other: ReturnType<typeof recorded<Redis>>;
let locks: Locks;
let holder: Holder;

beforeAll(async () => {
  server = await startRedis();
  admin = new Redis(server.url);
  other = recorded(new Redis(server.url), "other");
  locks = createLocks({ redis: other.redis, leaseMs: LEASE_MS, instanceId: "other" });
  holder = await Holder.start("stalled", { redisUrl: server.url, leaseMs: LEASE_MS });
});
afterAll(async () => {
  await holder?.stop();
  await locks?.close();
  other?.redis.disconnect();
  admin?.disconnect();
  await server?.stop();
});

/** Watches the lock hash for `ms`: every owner seen in it. */
async function ownersSeen(key: string, ms: number): Promise<Set<string>> {
  const seen = new Set<string>();
  const until = performance.now() + ms;
  while (performance.now() < until) {
    for (const f of Object.keys(await admin.hgetall(key))) if (!f.startsWith("~")) seen.add(f);
    await sleep(10);
  }
  return seen;
}

type Mode = "taken meanwhile" | "left free" | "inside withLock";
const plan: Mode[] = [
  "taken meanwhile",
  "taken meanwhile",
  "taken meanwhile",
  "left free",
  "left free",
  "inside withLock",
  "inside withLock",
];

it(`a holder whose event loop stalls past its lease is told it lost the lock, and it stays lost (${plan.length} runs)`, async () => {
  let reported = 0;
  let resurrected = 0;
  for (const [i, mode] of plan.entries()) {
    const resource = `stall:${i}`;
    const key = `lock:{${resource}}`;
    let owner: string;
    if (mode === "inside withLock") {
      const r = await holder.send("withLockStall", { resource, ms: STALL_MS });
      expect(r).toMatchObject({ ok: false, name: "LockLostError" });
      if (r.name === "LockLostError") reported++;
      owner = [...holder.ops.values()].filter((o) => o.op === "acquire").at(-1)!.items[0]!.owner;
    } else {
      const a = await holder.call("acquire", { resource, opts: {} });
      owner = a.owner as string;
      const stalled = holder.call("stall", { ms: STALL_MS });
      const next = mode === "taken meanwhile" ? await locks.acquire(resource, { waitMs: 5_000 }) : null;
      await stalled;
      // Give the woken holder's timers a turn, then ask what it believes.
      await sleep(20);
      const state = await holder.call("state");
      if (!state.isHeld && state.aborted && state.reason === "deadline") reported++;
      const seen = await ownersSeen(key, 2 * LEASE_MS);
      if (seen.has(owner)) resurrected++;
      if (next) {
        expect(await admin.hget(key, next.owner)).toBe("1");
        await next.release();
      } else expect(await admin.exists(key)).toBe(0);
    }
    const lost = holder.lockEvents().filter((e) => e.event.type === "lost" && e.event.owner === owner);
    expect(lost).toHaveLength(1);
    // No renewal of this owner succeeded after it was declared lost.
    const renewedLater = holder
      .source()
      .ops.filter((o) => (o.op === "renew" || o.op === "renewMany") && o.sent > lost[0]!.at)
      .filter((o) =>
        o.items.some(
          (it, j) =>
            it.owner === owner && Number(o.op === "renew" ? o.reply : (o.reply as unknown[])[j]) === 1,
        ),
      );
    expect(renewedLater).toEqual([]);
  }
  figure(
    `stall: ${reported}/${plan.length} stalled holders reported the lock lost (${STALL_MS} ms stall, ${LEASE_MS} ms lease), ${resurrected} resurrected by the watchdog`,
  );
  expect(reported).toBe(plan.length);
  expect(resurrected).toBe(0);
  assertNoTwoHolders("stall", [holder.source(), other.source()]);
});
