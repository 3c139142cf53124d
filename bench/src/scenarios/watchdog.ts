import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import type { Held } from "../contenders/types.js";
import { Collector, target } from "../harness/collect.js";
import { commandStats, scriptUsecPerCall, statsDelta, sum } from "../harness/commandstats.js";
import { callsDelta, clientCalls } from "../harness/connections.js";
import { canMeasureHeap, settledHeap } from "../harness/heap.js";
import { pool } from "../harness/pool.js";
import { progress } from "../harness/progress.js";
import { rotate } from "../harness/stats.js";
import type { BenchContext, ScenarioResult } from "./types.js";

const LEASE_MS = 1_800;
const TICK_MS = LEASE_MS / 3;
const TICKS = 3;
const CONCURRENCY = 200;

/** Keys with a TTL in db0: the leased lock keys still alive (fence counters have no TTL). */
async function leasedKeys(admin: Redis): Promise<number> {
  const m = /db0:keys=\d+,expires=(\d+)/.exec(await admin.info("keyspace"));
  return m ? Number(m[1]) : 0;
}

/** (d) Many held locks kept alive by each library's own renewal: Redis calls per tick and heap per lock. */
export async function watchdog(ctx: BenchContext): Promise<ScenarioResult> {
  const n = ctx.quick ? 2_000 : 10_000;
  const libs = [ctx.lockyard, ...ctx.peers];
  const col = new Collector();
  const settings: Record<string, string> = {};
  const notes: string[] = [];
  for (let round = 1; round <= ctx.rounds; round++) {
    for (const lib of rotate(libs, round)) {
      await ctx.admin.flushall();
      const c = await lib.create(ctx.redisUrl, { profile: "watchdog", leaseMs: LEASE_MS });
      settings[lib.id] = c.settings;
      for (let i = 0; i < 100; i++) await (await c.acquire(`d:warm:${i}`))?.release();
      const held: (Held | null)[] = new Array(n).fill(null);
      const heap0 = settledHeap();
      await pool(n, CONCURRENCY, async (i) => {
        held[i] = await c.acquire(`d:${i}`);
      });
      const heap1 = settledHeap();
      // Let the renewals that the acquisition burst scheduled spread out before counting.
      await sleep(TICK_MS);
      const calls0 = clientCalls(`lib-${lib.id}`);
      const stats0 = await commandStats(ctx.admin);
      await sleep(TICK_MS * TICKS);
      const calls = callsDelta(calls0, clientCalls(`lib-${lib.id}`));
      const stats1 = await commandStats(ctx.admin);
      const server = sum(statsDelta(stats0, stats1));
      const alive = await leasedKeys(ctx.admin);
      await pool(n, CONCURRENCY, async (i) => {
        await held[i]?.release();
      });
      await c.close();
      const perTick = calls.total / TICKS;
      col.add(lib.id, "callsPerTick", perTick);
      col.add(lib.id, "callsPer100", perTick / (n / 100));
      col.add(lib.id, "serverPer100", server / TICKS / (n / 100));
      col.add(lib.id, "heapBytes", (heap1 - heap0) / n);
      col.add(lib.id, "usecPerCall", scriptUsecPerCall(stats0, stats1));
      col.add(lib.id, "alive", alive);
      if (round === 1)
        notes.push(`${lib.label} calls in round 1's window: ${JSON.stringify(calls.byCommand)}.`);
      progress(
        `(d) watchdog · ${lib.label} · round ${round}/${ctx.rounds}: ${perTick.toFixed(0)} calls/tick (${(perTick / (n / 100)).toFixed(2)} per 100 locks), ${((heap1 - heap0) / n).toFixed(0)} B heap/lock, ${alive}/${n} alive`,
      );
    }
  }
  if (!canMeasureHeap()) notes.push("Heap was not measured: run node with --expose-gc.");
  const ly = ctx.lockyard.id;
  return {
    id: "d",
    title: `(d) Watchdog: ${n.toLocaleString("en-US")} held locks, lease ${LEASE_MS} ms renewed every ${TICK_MS} ms`,
    columns: [
      { key: "callsPerTick", header: "Redis calls/tick", digits: 0 },
      { key: "callsPer100", header: "calls per 100 locks per tick", digits: 2 },
      { key: "serverPer100", header: "Redis cmds per 100 locks per tick incl. in scripts", digits: 1 },
      { key: "usecPerCall", header: "Redis µs per renewal call", digits: 0 },
      { key: "heapBytes", header: "heap B/held lock", digits: 0 },
      { key: "alive", header: "locks alive after 3 ticks", digits: 0 },
    ],
    rows: libs.map((lib) => {
      const values = col.spreads(lib.id);
      return {
        id: lib.id,
        label: lib.label,
        values,
        targets:
          lib.id === ly
            ? [
                target(
                  "≤ 1 Redis call per 100 locks per tick",
                  values.callsPer100?.median ?? Number.NaN,
                  "<=",
                  1,
                ),
                target("≤ 1 KB heap per held lock", values.heapBytes?.median ?? Number.NaN, "<=", 1024, " B"),
              ]
            : undefined,
      };
    }),
    settings,
    notes: [
      `Calls are counted over ${TICKS} ticks (${TICK_MS * TICKS} ms) starting one tick after the last acquisition; heap is heapUsed after two forced GCs, before and after taking the locks, so it includes the bench's own small wrapper per lock (the same for every library).`,
      ...notes,
    ],
  };
}
