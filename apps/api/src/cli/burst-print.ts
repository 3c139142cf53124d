import type { BurstReport } from "../types.js";

const BAR_WIDTH = 30;

export function progressBar(done: number, total: number): string {
  const n = Math.round((done / Math.max(1, total)) * BAR_WIDTH);
  return `[${"#".repeat(n)}${".".repeat(BAR_WIDTH - n)}] ${done}/${total}`;
}

const pairs = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ");

export function printReport(r: BurstReport): void {
  const rows: [string, string | number][] = [
    ["mode", r.mode],
    ["requests", r.requests],
    ["initial stock", r.initialStock],
    ["successes", r.successes],
    ["sold out", r.soldOut],
    ["rejected", pairs(r.rejected) || "0"],
    ["errors", r.errors],
    ["final stock", r.finalStock],
    ["lowest stock", r.lowestStock],
    ["oversold", r.oversold],
    ["duration ms", r.durationMs],
    ["latency p50/p95/p99 ms", `${r.latencyMs.p50} / ${r.latencyMs.p95} / ${r.latencyMs.p99}`],
    ["per instance", pairs(r.perInstance)],
    ["redis commands / success (deduct path only)", r.redisCommandsPerSuccess ?? "n/a"],
    ...(r.traceId ? [["trace id (OpenTelemetry)", r.traceId] as [string, string]] : []),
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  console.log(`\n${"-".repeat(w + 30)}`);
  for (const [k, v] of rows) console.log(`${k.padEnd(w)}  ${v}`);
  console.log("-".repeat(w + 30));
  console.log(
    r.lowestStock >= 0 && r.oversold === 0
      ? "Stock never dropped below zero."
      : `Oversold by ${r.oversold} (lowest stock ${r.lowestStock}).`,
  );
}
