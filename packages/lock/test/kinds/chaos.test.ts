// Chaos on real parts: three processes (chaos-worker.mjs, ioredis with its defaults) take a mutex, a 2-permit
// semaphore, a read-write lock or a PostgreSQL mutex in every way the API offers, while this file pauses one past
// its lease (SIGSTOP), closes its Locks mid-call, kills one's connections or every subscriber (CLIENT KILL; on
// PostgreSQL pg_terminate_backend), SIGKILLs one and starts another, or SIGKILLs redis-server itself and starts it
// again on its append-only file (fsync always: what it answered survives).
// Checked from what the processes report on one monotonic clock:
// - capacity: at no instant do more owners hold than the lock allows, counting a hold only up to the last time
//   its process saw isHeld() true (a paused holder's own belief is not a hold: fencing covers that, see faults/);
// - every call settles within its bound (waitMs, its abort, or at once for tryAcquire and release) plus slack,
//   unless its own process was paused meanwhile; no call fails with an error outside the documented ones;
// - once every process has stopped, nothing is left in Redis beyond the lease of a SIGKILLed holder.
// CHAOS_MS (default 6000 per kind) runs longer: `CHAOS_MS=120000 npx vitest run test/kinds/chaos.test.ts`.
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { workers } from "../fork-worker.js";
import { sleep, uniq } from "../helpers.js";
import { pgPool, TABLE } from "../pg-helpers.js";
import { type RedisServer, startRedis } from "../redlock-helpers.js";
import { Rng } from "../sim/rng.js";

const WORKER = fileURLToPath(new URL("./chaos-worker.mjs", import.meta.url));
const CHAOS_MS = Number(process.env.CHAOS_MS ?? 6_000);
const LEASE_MS = 400;
/** What a loaded 2-core machine may add to a call's own bound (timers late, a reconnect, a busy Redis). */
const SLACK_MS = 1_500;
/** After redis-server is back: ioredis's default reconnect back-off (at most 2 s) plus that slack. */
const RECONNECT_MS = 2_000 + SLACK_MS;
const now = () => Number(process.hrtime.bigint()) / 1e6;

type Message =
  | { op: string; t: "ready" | "stopped" }
  | { op: string; t: "hold"; id: number; owner: string; exclusive: boolean; start: number }
  | { op: string; t: "held"; id: number; at: number }
  | { op: string; t: "call"; op2?: string; start: number; end: number; boundMs: number }
  | { op: string; t: "unexpected" | "crash"; where?: string; error: string };

interface Hold {
  pid: number;
  owner: string;
  exclusive: boolean;
  start: number;
  end: number;
}

let server: RedisServer;
let redis: Redis;
let pool: pg.Pool;
const { spawn, killAll } = workers<{ op: string }>(WORKER);
beforeAll(async () => {
  server = await startRedis({ args: ["--appendonly", "yes", "--appendfsync", "always"] });
  redis = new Redis(server.url);
  redis.on("error", () => {});
  pool = await pgPool(2);
});
afterAll(async () => {
  killAll();
  redis?.disconnect();
  await server?.stop();
  await pool?.end();
});

async function chaos(kind: "mutex" | "semaphore" | "rw" | "pg", permits: number, seed: number) {
  const rng = new Rng(seed);
  const resource = uniq(`chaos-${kind}`);
  const holds = new Map<string, Hold>();
  const calls: { pid: number; op: string; start: number; end: number; boundMs: number }[] = [];
  const problems: string[] = [];
  const paused = new Map<number, [number, number][]>();
  const outages: [number, number][] = [];
  const faults: Record<string, number> = {
    pause: 0,
    close: 0,
    connection: 0,
    subscribers: 0,
    sigkill: 0,
    restart: 0,
  };

  const start = (): { pid: number; child: ReturnType<typeof spawn>["child"]; stopped: Promise<void> } => {
    const w = spawn({
      REDIS_URL: server.url,
      PG_URL: inject("pgUrl"),
      PG_TABLE: TABLE,
      KIND: kind,
      PERMITS: String(permits),
      RESOURCE: resource,
      LEASE_MS: String(LEASE_MS),
      CALLERS: "4",
      LOCKS_OPTIONS: JSON.stringify({
        localStreak: rng.pick([0, 4, 16]),
        localStreakMs: rng.pick([0, 20]),
        localHandoff: rng.pick(["early", "confirmed"]),
        handoffAdoption: rng.pick(["message", "attempt"]),
      }),
    });
    const pid = w.child.pid!;
    let stopped!: () => void;
    const done = new Promise<void>((r) => {
      stopped = r;
    });
    w.child.on("message", (m: Message) => {
      if (m.t === "hold")
        holds.set(`${pid}:${m.id}`, {
          pid,
          owner: m.owner,
          exclusive: m.exclusive,
          start: m.start,
          end: m.start,
        });
      else if (m.t === "held") {
        const h = holds.get(`${pid}:${m.id}`);
        if (h && m.at > h.end) h.end = m.at;
      } else if (m.t === "call")
        calls.push({ pid, op: m.op, start: m.start, end: m.end, boundMs: m.boundMs });
      else if (m.t === "unexpected" || m.t === "crash")
        problems.push(`${m.t} in ${m.where ?? "worker"}: ${m.error}`);
      else if (m.t === "stopped") stopped();
    });
    w.child.on("exit", () => stopped());
    return { pid, child: w.child, stopped: done };
  };

  let procs = [start(), start(), start()];
  const until = now() + CHAOS_MS;
  await sleep(300);
  while (now() < until) {
    await sleep(rng.int(300, 800));
    const i = rng.int(0, procs.length - 1);
    const p = procs[i]!;
    const fault = rng.next();
    if (fault < 0.3) {
      faults.pause!++;
      const from = now();
      p.child.kill("SIGSTOP");
      await sleep(rng.int(LEASE_MS * 1.2, LEASE_MS * 2));
      p.child.kill("SIGCONT");
      paused.set(p.pid, [...(paused.get(p.pid) ?? []), [from, now()]]);
    } else if (fault < 0.4) {
      // close() at any moment: its calls in flight end, the process goes on with a fresh Locks.
      faults.close!++;
      p.child.send({ op: "close" });
    } else if (kind === "pg" && fault < 0.85) {
      // PostgreSQL: terminate one of its connections, or the one it LISTENs on.
      const listen = fault >= 0.6;
      faults[listen ? "subscribers" : "connection"]!++;
      await pool
        .query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND (query ILIKE 'LISTEN%') = $2 LIMIT 1`,
          [`chaos-${p.pid}`, listen],
        )
        .catch(() => {});
    } else if (fault < 0.6) {
      faults.connection!++;
      // Its command connection (the first of its name; its subscriber is a duplicate with the same name).
      const [id] = await clientIds(`chaos-${p.pid}`);
      if (id) await redis.call("CLIENT", "KILL", "ID", id).catch(() => {});
    } else if (fault < 0.7) {
      faults.subscribers!++;
      await redis.call("CLIENT", "KILL", "TYPE", "pubsub").catch(() => {});
    } else if (fault < 0.85) {
      faults.restart!++;
      const from = now();
      await server.kill("SIGKILL");
      await sleep(rng.int(50, 300));
      await server.restart();
      outages.push([from, now()]);
    } else {
      faults.sigkill!++;
      p.child.kill("SIGKILL");
      procs = procs.map((q, j) => (j === i ? start() : q));
    }
  }
  for (const p of procs) p.child.send({ op: "stop" });
  await Promise.all(procs.map((p) => p.stopped));

  // Capacity, on the reported intervals.
  const list = [...holds.values()].filter((h) => h.end > h.start);
  const limit = kind === "semaphore" ? permits : 1;
  for (const h of list) {
    const others = list.filter((o) => o.owner !== h.owner && o.start < h.end && h.start < o.end);
    const at = others.filter((o) => o.start <= h.start && h.start < o.end);
    if (
      kind === "rw"
        ? others.length > 0 && (h.exclusive || others.some((o) => o.exclusive))
        : at.length + 1 > limit
    ) {
      problems.push(
        `over capacity: ${JSON.stringify(h)} with ${JSON.stringify(kind === "rw" ? others : at)}`,
      );
    }
  }
  // Settling, outside the caller's own pauses. A call that met Redis down (tryAcquire and release have no wait
  // of their own: they wait in the client's offline queue) may also take until the client is back: ioredis's
  // default back-off between reconnects is at most 2 s.
  for (const c of calls) {
    const ownPause = (paused.get(c.pid) ?? []).some(([a, b]) => a < c.end && c.start < b);
    const redisBack = Math.max(0, ...outages.filter(([a]) => a < c.end).map(([, b]) => b));
    const bound = Math.max(
      c.start + c.boundMs + SLACK_MS,
      redisBack > c.start - SLACK_MS ? redisBack + RECONNECT_MS : 0,
    );
    if (!ownPause && c.end > bound) {
      problems.push(`${c.op} took ${(c.end - c.start).toFixed(0)} ms against a bound of ${c.boundMs} ms`);
    }
  }
  // Nothing left once a SIGKILLed holder's lease (and a queue entry's) has run out.
  await sleep(LEASE_MS + 1_000);
  const heldLeft =
    kind === "pg"
      ? (
          await pool.query(
            `SELECT resource FROM ${TABLE} WHERE resource = $1 AND owner IS NOT NULL AND expires_at > now()`,
            [resource],
          )
        ).rows.map((r: { resource: string }) => r.resource)
      : (await redis.keys(`*${resource}*`)).filter((k) => !k.includes("fence"));
  if (heldLeft.length > 0) problems.push(`left in Redis: ${heldLeft.join(", ")}`);

  const granted = list.length;
  console.log(
    `chaos ${kind}: ${calls.length} calls, ${granted} holds, faults ${JSON.stringify(faults)}, ${problems.length} problems`,
  );
  return { problems, granted, calls: calls.length };
}

async function clientIds(name: string): Promise<string[]> {
  const list = (await redis.call("CLIENT", "LIST")) as string;
  return list
    .split("\n")
    .filter((l) => l.includes(` name=${name} `))
    .map((l) => /^id=(\d+)/.exec(l)![1]!);
}

describe("chaos on real processes: pauses, killed connections, SIGKILL", () => {
  for (const [kind, permits] of [
    ["mutex", 1],
    ["semaphore", 2],
    ["rw", 1],
    ["pg", 1],
  ] as const) {
    it(
      `${kind}: never over capacity, every call settles in its bound, nothing left behind`,
      async () => {
        const { problems, granted, calls } = await chaos(kind, permits, Date.now() % 1e6);
        expect(problems).toEqual([]);
        expect(granted).toBeGreaterThan(20);
        expect(calls).toBeGreaterThan(50);
      },
      CHAOS_MS + 30_000,
    );
  }
});
