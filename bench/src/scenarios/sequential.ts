import { Collector } from "../harness/collect.js";
import { progress } from "../harness/progress.js";
import { percentile, ratios, rotate, spread } from "../harness/stats.js";
import type { BenchContext, ScenarioResult } from "./types.js";

const WARMUP = 300;

/** (a) Uncontended acquire+release pairs, one after another, each on a key nobody else uses. */
export async function sequential(ctx: BenchContext): Promise<ScenarioResult> {
  const pairs = ctx.quick ? 500 : 2_000;
  const libs = [ctx.lockyard, ...ctx.peers, ...(ctx.otherStores ?? [])];
  const col = new Collector();
  const settings: Record<string, string> = {};
  for (let round = 1; round <= ctx.throughputRounds; round++) {
    for (const lib of rotate(libs, round)) {
      await ctx.admin.flushall();
      const c = await lib.create(ctx.redisUrl, { profile: "recommended" });
      settings[lib.id] = c.settings;
      for (let i = 0; i < WARMUP; i++) await (await c.acquire(`a:warm:${i}`))?.release();
      const lat = new Float64Array(pairs);
      const t0 = performance.now();
      for (let i = 0; i < pairs; i++) {
        const s = performance.now();
        const h = await c.acquire(`a:${round}:${i}`);
        if (!h) throw new Error(`${lib.label}: an uncontended acquire timed out`);
        await h.release();
        lat[i] = performance.now() - s;
      }
      const seconds = (performance.now() - t0) / 1000;
      await c.close();
      const sample = Array.from(lat);
      col.add(lib.id, "pairsPerSec", pairs / seconds);
      col.add(lib.id, "p50us", percentile(sample, 50) * 1000);
      col.add(lib.id, "p99us", percentile(sample, 99) * 1000);
      progress(
        `(a) sequential · ${lib.label} · round ${round}/${ctx.throughputRounds}: ${Math.round(pairs / seconds)} pairs/s, p99 ${(percentile(sample, 99) * 1000).toFixed(0)} µs`,
      );
    }
  }
  const ly = ctx.lockyard.id;
  return {
    id: "a",
    title: "(a) Sequential: uncontended acquire+release pairs on distinct keys",
    columns: [
      { key: "pairsPerSec", header: "pairs/s", digits: 0 },
      { key: "p50us", header: "p50 µs", digits: 0 },
      { key: "p99us", header: "p99 µs", digits: 0 },
      { key: "lockyardX", header: "Lockyard pairs/s ÷ this", digits: 2 },
    ],
    rows: libs.map((lib) => ({
      id: lib.id,
      label: lib.label,
      values: {
        ...col.spreads(lib.id),
        lockyardX: spread(ratios(col.values(ly, "pairsPerSec"), col.values(lib.id, "pairsPerSec"))),
      },
    })),
    settings,
    notes: [`${pairs} pairs per run after ${WARMUP} warm-up pairs; latency is one acquire plus one release.`],
  };
}
