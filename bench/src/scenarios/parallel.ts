import type { Contender } from "../contenders/types.js";
import { Collector, target } from "../harness/collect.js";
import { callsDelta, clientCalls } from "../harness/connections.js";
import { progress } from "../harness/progress.js";
import { redisCpuSeconds } from "../harness/redis-cpu.js";
import { sqlCalls } from "../harness/sql-counter.js";
import { ratios, rotate, spread } from "../harness/stats.js";
import type { BenchContext, ScenarioResult } from "./types.js";

const LOOPS = 64;

async function loops(c: Contender, prefix: string, ms: number): Promise<number> {
  let pairs = 0;
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, i) => {
      const key = `${prefix}:${i}`;
      while (performance.now() < end) {
        const h = await c.acquire(key);
        if (!h) throw new Error(`an uncontended acquire of ${key} timed out`);
        await h.release();
        pairs++;
      }
    }),
  );
  return pairs;
}

/** (b) 64 concurrent acquire+release loops, each on its own key, all over the library's one connection. */
export async function parallel(ctx: BenchContext): Promise<ScenarioResult> {
  const ms = ctx.quick ? 600 : 2_000;
  const others = ctx.otherStores ?? [];
  const libs = [ctx.lockyard, ...ctx.peers, ...others];
  const col = new Collector();
  const settings: Record<string, string> = {};
  for (let round = 1; round <= ctx.throughputRounds; round++) {
    for (const lib of rotate(libs, round)) {
      await ctx.admin.flushall();
      const c = await lib.create(ctx.redisUrl, { profile: "recommended" });
      settings[lib.id] = c.settings;
      await loops(c, "b:warm", 400);
      const calls0 = clientCalls(`lib-${lib.id}`);
      const sql0 = sqlCalls(`lib-${lib.id}`);
      const redisCpu0 = await redisCpuSeconds(ctx.admin);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const pairs = await loops(c, `b:${round}`, ms);
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const redisCpu = (await redisCpuSeconds(ctx.admin)) - redisCpu0;
      const calls = callsDelta(calls0, clientCalls(`lib-${lib.id}`));
      const sql = callsDelta(sql0, sqlCalls(`lib-${lib.id}`));
      await c.close();
      const cpuPerPair = (cpu.user + cpu.system) / pairs;
      col.add(lib.id, "pairsPerSec", pairs / seconds);
      col.add(lib.id, "cpuUsPerPair", cpuPerPair);
      // Another store: Redis CPU and Redis calls say nothing about it; its SQL statements go in a note.
      if (others.includes(lib)) col.add(lib.id, "sqlPerPair", sql.total / pairs);
      else {
        col.add(lib.id, "redisCpuUsPerPair", (redisCpu * 1e6) / pairs);
        col.add(lib.id, "callsPerPair", calls.total / pairs);
      }
      progress(
        `(b) parallel · ${lib.label} · round ${round}/${ctx.throughputRounds}: ${Math.round(pairs / seconds)} pairs/s, ${cpuPerPair.toFixed(1)} CPU µs/pair, Redis ${((redisCpu * 1e6) / pairs).toFixed(1)} µs/pair`,
      );
    }
  }
  const ly = ctx.lockyard.id;
  // Best peer per round, so the ratio compares runs that shared the machine's mood.
  const bestPeer = Array.from({ length: ctx.throughputRounds }, (_, r) =>
    Math.max(...ctx.peers.map((p) => col.values(p.id, "pairsPerSec")[r] ?? 0)),
  );
  const vsBest = spread(ratios(col.values(ly, "pairsPerSec"), bestPeer));
  return {
    id: "b",
    title: `(b) Parallel: ${LOOPS} concurrent loops on distinct keys over one connection`,
    columns: [
      { key: "pairsPerSec", header: "pairs/s", digits: 0 },
      { key: "cpuUsPerPair", header: "Node CPU µs/pair", digits: 1 },
      { key: "redisCpuUsPerPair", header: "Redis CPU µs/pair", digits: 1 },
      { key: "callsPerPair", header: "calls/pair", digits: 2 },
      { key: "lockyardX", header: "Lockyard pairs/s ÷ this", digits: 2 },
    ],
    rows: libs.map((lib) => ({
      id: lib.id,
      label: lib.label,
      values: {
        ...col.spreads(lib.id),
        lockyardX: spread(ratios(col.values(ly, "pairsPerSec"), col.values(lib.id, "pairsPerSec"))),
      },
      targets:
        lib.id === ly ? [target("pairs/s ≥ 1.3× the best peer", vsBest.median, ">=", 1.3, "×")] : undefined,
    })),
    settings,
    notes: [
      `${LOOPS} loops for ${ms} ms per run after a 400 ms warm-up; Node CPU is process.cpuUsage() (user+system) of the bench process over the run, Redis CPU is the INFO cpu delta of redis-server, both divided by the pairs.`,
      `Lockyard ÷ best peer per round: ${vsBest.runs.map((r) => r.toFixed(2)).join(", ")}.`,
      ...others.map(
        (lib) =>
          `${lib.label} runs on its pool of connections, not one connection; it sent ${spread(col.values(lib.id, "sqlPerPair")).median.toFixed(2)} SQL statements per pair (Redis columns do not apply).`,
      ),
    ],
  };
}
