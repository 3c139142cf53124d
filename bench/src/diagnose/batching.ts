// Diagnosis for scenario (b): how much of an uncontended acquire+release is per-call overhead (ioredis command,
// socket write, EVALSHA dispatch) rather than lock logic? Runs 64 loops over one connection for:
//   1. Lockyard as it is; 2. Lockyard's own Lua, one call per operation, no library around it;
//   3. the same Lua batched: every acquire (release) issued in one tick goes out as one script call.
// Usage: node bench/dist/diagnose/batching.js [rounds]
import { randomBytes } from "node:crypto";
import { createLocks } from "@lockyard/lock";
import { scripts } from "@lockyard/lock/backend";
import type { Redis } from "ioredis";
import { connect } from "../harness/connections.js";
import { redisCpuSeconds } from "../harness/redis-cpu.js";
import { startBenchRedis } from "../harness/redis-server.js";
import { spread } from "../harness/stats.js";
import { ACQUIRE_MANY, RELEASE_MANY } from "./batching-lua.js";

type Release = () => Promise<unknown>;
type Acquire = (key: string) => Promise<Release>;
type Scripted = Redis & Record<string, (...args: (string | number)[]) => Promise<unknown>>;

const LOOPS = 64;
const MS = 1_500;
const lua = (name: string) => scripts.find((s) => s.name === name)!.lua;
const owner = () => `bench:${randomBytes(16).toString("hex")}`;

/** Collects calls made in one tick and sends them as one. */
function perTick<T, R>(send: (items: T[]) => Promise<R[]>): (item: T) => Promise<R> {
  let pending: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    send(batch.map((p) => p.item)).then(
      (rs) => {
        for (const [i, p] of batch.entries()) p.resolve(rs[i]!);
      },
      (e) => {
        for (const p of batch) p.reject(e);
      },
    );
  };
  return (item) =>
    new Promise((resolve, reject) => {
      if (pending.length === 0) process.nextTick(flush);
      pending.push({ item, resolve, reject });
    });
}

const variants: Record<string, (r: Scripted) => Acquire> = {
  "Lockyard as it is": (r) => {
    const locks = createLocks({ redis: r });
    return async (k) => {
      const h = await locks.acquire(k);
      return () => h.release();
    };
  },
  "its Lua, one call per op": (r) => {
    r.defineCommand("dA", { numberOfKeys: 4, lua: lua("lockyardAcquire") });
    r.defineCommand("dR", { numberOfKeys: 5, lua: lua("lockyardRelease") });
    return async (k) => {
      const o = owner();
      const queue = [`queue:{${k}}`, `queue-leases:{${k}}`];
      await r.dA!(`lock:{${k}}`, `fence:{${k}}`, ...queue, o, 30_000, "0", "0", 1_560);
      return () =>
        r.dR!(
          `lock:{${k}}`,
          `lock-released:{${k}}`,
          `fence:{${k}}`,
          ...queue,
          o,
          30_000,
          "0",
          "",
          1_560,
          "",
          0,
          "0",
        );
    };
  },
  "its Lua, batched per tick": (r) => {
    r.defineCommand("dAM", { lua: ACQUIRE_MANY });
    r.defineCommand("dRM", { lua: RELEASE_MANY });
    const acquire = perTick<{ k: string; o: string }, number>(async (items) => {
      const keys = items.flatMap(({ k }) => [`lock:{${k}}`, `fence:{${k}}`]);
      return (await r.dAM!(keys.length, ...keys, ...items.flatMap(({ o }) => [o, 30_000]))) as number[];
    });
    const release = perTick<{ k: string; o: string }, number>(async (items) => {
      const keys = items.flatMap(({ k }) => [`lock:{${k}}`, `lock-released:{${k}}`]);
      return (await r.dRM!(keys.length, ...keys, ...items.map(({ o }) => o))) as number[];
    });
    return async (k) => {
      const o = owner();
      if ((await acquire({ k, o })) < 0) throw new Error(`${k} is held`);
      return () => release({ k, o });
    };
  },
};

async function loops(acquire: Acquire, prefix: string, ms: number): Promise<number> {
  let pairs = 0;
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, i) => {
      while (performance.now() < end) {
        await (await acquire(`${prefix}:${i}`))();
        pairs++;
      }
    }),
  );
  return pairs;
}

const rounds = Number(process.argv[2] ?? 3);
const server = await startBenchRedis();
const admin = await connect(server.url, "diag-admin");
const results = new Map<string, { pairs: number[]; node: number[]; redis: number[] }>();
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, make] of Object.entries(variants)) {
      await admin.flushall();
      const r = (await connect(server.url, "diag-lib")) as Scripted;
      const acquire = make(r);
      await loops(acquire, "warm", 300);
      const redis0 = await redisCpuSeconds(admin);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const pairs = await loops(acquire, `r${round}`, MS);
      const s = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const redisUs = (((await redisCpuSeconds(admin)) - redis0) * 1e6) / pairs;
      r.disconnect();
      const entry = results.get(name) ?? { pairs: [], node: [], redis: [] };
      entry.pairs.push(pairs / s);
      entry.node.push((cpu.user + cpu.system) / pairs);
      entry.redis.push(redisUs);
      results.set(name, entry);
    }
  }
  for (const [name, e] of results) {
    console.log(
      `${name.padEnd(28)} ${spread(e.pairs).median.toFixed(0).padStart(7)} pairs/s   Node ${spread(e.node).median.toFixed(1)} CPU µs/pair   Redis ${spread(e.redis).median.toFixed(1)} CPU µs/pair`,
    );
  }
} finally {
  admin.disconnect();
  await server.stop();
}
