import { ratios, spread } from "../harness/stats.js";
import type { ScenarioResult } from "../scenarios/types.js";
import { num } from "./format.js";

/**
 * The seed's "database lock: simple, but slower", measured: one sentence comparing Lockyard on PostgreSQL
 * with Lockyard on Redis in (c). Ratios are taken per round (runs are in round order) and then the median.
 */
export function pgVersusRedis(c: ScenarioResult | undefined): string | undefined {
  const row = (id: string) => c?.rows.find((r) => r.id === id);
  const ratio = (profile: string) => {
    const pgRow = row(`postgres@${profile}`);
    const redisRow = row(`lockyard@${profile}`);
    if (!pgRow?.values.wallMs || !redisRow?.values.wallMs) return undefined;
    return spread(ratios(pgRow.values.wallMs.runs, redisRow.values.wallMs.runs));
  };
  const rec = ratio("recommended");
  if (!rec || !Number.isFinite(rec.median)) return undefined;
  const seed = ratio("seed");
  const pgRec = row("postgres@recommended")!.values;
  const redisRec = row("lockyard@recommended")!.values;
  const range = (s: { min: number; max: number }) => `${num(s.min, 2)}–${num(s.max, 2)}`;
  const withSeed =
    seed && Number.isFinite(seed.median)
      ? ` and ${num(seed.median, 2)}× (${range(seed)}) with the seed's`
      : "";
  return (
    `Measured, the seed's "database lock: simple, but slower": on PostgreSQL, Lockyard took ${num(rec.median, 2)}× (${range(rec)}) the wall time it took on Redis with recommended settings` +
    ` (${num(pgRec.wallMs!.median, 0)} vs ${num(redisRec.wallMs!.median, 0)} ms)${withSeed}, sending ${num(pgRec.sqlPerAcq?.median ?? Number.NaN, 2)} SQL statements per acquisition where Redis took ${num(redisRec.lockCallsPerAcq?.median ?? Number.NaN, 2)} calls: waiters queue inside the process, so the store sees about one acquire and one release per hold either way and the gap is the cost of those round trips (uncontended, (a) shows it alone).`
  );
}
