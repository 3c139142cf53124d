import type { Server } from "node:net";
import { floor } from "../contenders/floor.js";
import { lockyardConfirmed } from "../contenders/lockyard-confirmed.js";
import { Collector } from "../harness/collect.js";
import { progress } from "../harness/progress.js";
import { repoPath } from "../harness/repo.js";
import { percentile, ratios, rotate, type Spread, spread } from "../harness/stats.js";
import { type Config, floorRow, runOnce, type Store } from "./cross-process.js";
import type { BenchContext, Row, ScenarioResult } from "./types.js";

const TASKS = 200;
const STOCK = 100;
const PROCESSES = [1, 2, 4] as const;
/** Added to each direction by the proxy: a round trip of about 2 ms, a network inside one data centre or so. */
const DELAY_MS = 1;

interface DelayProxyLib {
  startDelayProxy(port: number, targetUrl: string, delayMs: number): Promise<Server>;
}

/**
 * (j) Scenario (f) over a network: every connection of every process (the library's and the work's) goes through
 * a proxy that delays each chunk by DELAY_MS each way (scripts/lib/delay-proxy.mjs; this kernel has no netem).
 * Lockyard runs twice, as it ships and with both handoff shortcuts off (a local waiter starts only on Redis's
 * answer, a waiter handed the lock by another process adopts it with an attempt): each shortcut saves a round trip,
 * which loopback hides and a network shows. The floor is the in-process FIFO through the same proxy.
 */
export async function crossProcessNet(ctx: BenchContext): Promise<ScenarioResult> {
  const tasks = ctx.quick ? 48 : TASKS;
  const stock = ctx.quick ? 24 : STOCK;
  const rounds = ctx.quick ? 1 : ctx.rounds;
  const { startDelayProxy } = (await import(repoPath("scripts/lib/delay-proxy.mjs"))) as DelayProxyLib;
  const proxy = await startDelayProxy(0, ctx.redisUrl, DELAY_MS);
  const address = proxy.address();
  if (address === null || typeof address === "string") throw new Error("(j) the delay proxy has no port");
  const redisUrl = `redis://127.0.0.1:${address.port}`;
  progress(`(j) delay proxy on ${redisUrl}, +${DELAY_MS} ms each way`);
  const libs = [ctx.lockyard, lockyardConfirmed, ...ctx.peers];
  const configs: Config[] = [
    { lib: floor, processes: 1, cluster: false, row: "floor", redisUrl },
    ...PROCESSES.flatMap((p) =>
      libs
        // Peers only where they contend across processes: one process of theirs is (c) with a slower network.
        .filter((lib) => p > 1 || lib === ctx.lockyard || lib === lockyardConfirmed)
        .map((lib) => ({ lib, processes: p, cluster: false, row: `${lib.id}@${p}`, redisUrl })),
    ),
  ];
  const store: Store = { flush: async () => void (await ctx.admin.flushall()), kv: ctx.admin };
  const col = new Collector();
  const settings: Record<string, string> = {};
  const notes: string[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const cfg of rotate(configs, round)) {
        await store.flush();
        const out = await runOnce(ctx, cfg, store, [], tasks, stock);
        settings[cfg.lib.id] = out.settings;
        const acq = Math.max(1, out.acquired);
        const oversold = Math.max(0, out.sold - (stock - out.finalStock)) + Math.max(0, -out.finalStock);
        col.add(cfg.row, "processes", cfg.processes);
        col.add(cfg.row, "wallMs", out.wallMs);
        col.add(cfg.row, "lockCallsPerAcq", out.lockCallsTotal / acq);
        col.add(cfg.row, "p99Wait", percentile(out.waits, 99));
        col.add(cfg.row, "finishSpreadPct", out.finishSpreadPct);
        col.add(cfg.row, "timeouts", out.timeouts);
        col.add(cfg.row, "oversold", oversold);
        if (out.errors > 0)
          notes.push(
            `${cfg.lib.label} P = ${cfg.processes} round ${round}: ${out.errors} acquire/release errors.`,
          );
        progress(
          `(j) over a ${2 * DELAY_MS} ms round trip · ${cfg.lib.label} · P = ${cfg.processes} · round ${round}/${rounds}: ${out.wallMs.toFixed(0)} ms, ${(out.lockCallsTotal / acq).toFixed(1)} lock calls/acq, ${out.timeouts} timeouts, oversold ${oversold}`,
        );
      }
    }
  } finally {
    proxy.close();
  }

  const floorWall = col.values("floor", "wallMs");
  const rows: Row[] = [floorRow(col)];
  for (const p of PROCESSES) {
    for (const lib of libs) {
      const id = `${lib.id}@${p}`;
      if (!col.spreads(id).wallMs) continue;
      const wall = col.values(id, "wallMs");
      const values: Record<string, Spread> = { ...col.spreads(id), xFloor: spread(ratios(wall, floorWall)) };
      if (lib === ctx.lockyard) {
        // Per round: the same library with both shortcuts off, and the fastest peer, each ÷ Lockyard.
        values.confirmedX = spread(ratios(col.values(`${lockyardConfirmed.id}@${p}`, "wallMs"), wall));
        const peerRows = ctx.peers.map((peer) => `${peer.id}@${p}`).filter((r) => col.spreads(r).wallMs);
        if (peerRows.length > 0) {
          const bestPeer = wall.map((_, i) => Math.min(...peerRows.map((r) => col.values(r, "wallMs")[i]!)));
          values.bestPeerX = spread(ratios(bestPeer, wall));
        }
      }
      rows.push({ id, label: lib.label, values });
    }
    const best = ctx.peers
      .map((lib) => ({ lib, spreads: col.spreads(`${lib.id}@${p}`) }))
      .filter((x) => x.spreads.wallMs)
      .sort((a, b) => a.spreads.wallMs!.median - b.spreads.wallMs!.median)[0];
    if (best)
      notes.push(
        `P = ${p}: the fastest peer by median wall was ${best.lib.label} (${best.spreads.wallMs!.median.toFixed(0)} ms, ${best.spreads.timeouts?.median ?? 0} of ${tasks} tasks timed out); a peer's wall ends early when its tasks give up.`,
      );
  }
  if (ctx.quick) notes.unshift(`--quick: ${tasks} tasks from stock ${stock}, one round.`);
  return {
    id: "j",
    title: `(j) Contended across processes over a ${2 * DELAY_MS} ms round trip: (f) with every connection through a delaying proxy, P = ${PROCESSES.join(", ")}`,
    columns: [
      { key: "processes", header: "processes", digits: 0 },
      { key: "wallMs", header: "wall ms", digits: 0 },
      { key: "xFloor", header: "× floor (same proxy)", digits: 2 },
      { key: "lockCallsPerAcq", header: "lock calls/acq", digits: 2 },
      { key: "p99Wait", header: "p99 wait ms", digits: 0 },
      { key: "finishSpreadPct", header: "finish spread % of wall", digits: 0 },
      { key: "timeouts", header: "timeouts", digits: 0 },
      { key: "oversold", header: "oversold", digits: 0 },
      { key: "confirmedX", header: "handoffs confirmed ÷ Lockyard", digits: 2 },
      { key: "bestPeerX", header: "best peer wall ÷ Lockyard", digits: 2 },
    ],
    rows,
    settings,
    notes,
  };
}
