import { floor } from "../contenders/floor.js";
import type { ContenderFactory, Profile } from "../contenders/types.js";
import { Collector, target } from "../harness/collect.js";
import { commandStats, statsDelta, sum } from "../harness/commandstats.js";
import { callsDelta, clientCalls } from "../harness/connections.js";
import { progress } from "../harness/progress.js";
import { sqlCalls } from "../harness/sql-counter.js";
import { ratios, rotate, spread } from "../harness/stats.js";
import { pgVersusRedis } from "../report/stores.js";
import { contendBare, contendOnce } from "./contend-once.js";
import type { BenchContext, Row, ScenarioResult } from "./types.js";

const TASKS = 200;
const STOCK = 100;
const WORK_MS = 1;

interface Config {
  lib: ContenderFactory;
  profile: Profile;
  row: string;
}

/** (c) 200 tasks on one key, each GET → 1 ms → SET stock−1 under the lock, from stock 100. */
export async function contended(ctx: BenchContext): Promise<ScenarioResult> {
  const tasks = ctx.quick ? 50 : TASKS;
  const seedDesign = ctx.peers.find((p) => p.id === "seed");
  const otherPeers = ctx.peers.filter((p) => p.id !== "seed");
  const others = ctx.otherStores ?? [];
  const configs: Config[] = [
    { lib: floor, profile: "recommended", row: "floor" },
    ...[ctx.lockyard, ...otherPeers].map((lib) => ({
      lib,
      profile: "recommended" as const,
      row: `${lib.id}@recommended`,
    })),
    // The seed design has a single set of settings, which are the seed's: one run serves both tables.
    ...(seedDesign ? [{ lib: seedDesign, profile: "seed" as const, row: "seed@seed" }] : []),
    ...[ctx.lockyard, ...otherPeers].map((lib) => ({ lib, profile: "seed" as const, row: `${lib.id}@seed` })),
    // Lockyard on another store (PostgreSQL), last so the Redis rows read as before.
    ...others.flatMap((lib) =>
      (["recommended", "seed"] as const).map((profile) => ({ lib, profile, row: `${lib.id}@${profile}` })),
    ),
  ];
  const col = new Collector();
  const settings: Record<string, string> = {};
  const notes: string[] = [];
  for (let round = 1; round <= ctx.rounds; round++) {
    for (const cfg of rotate(configs, round)) {
      await ctx.admin.flushall();
      const c = await cfg.lib.create(ctx.redisUrl, { profile: cfg.profile });
      settings[cfg.row] = c.settings;
      // Warm up on another key: scripts loaded, JIT warm, a subscriber connection opened where there is one.
      await contendOnce(c, ctx.work, {
        key: "c:warm",
        stockKey: "c:warm-stock",
        tasks: 20,
        stock: 10,
        workMs: WORK_MS,
      });
      const lib0 = clientCalls(`lib-${cfg.lib.id}`);
      const work0 = clientCalls("bench-work");
      const sql0 = sqlCalls(`lib-${cfg.lib.id}`);
      const stats0 = await commandStats(ctx.admin);
      const out = await contendOnce(c, ctx.work, {
        key: "c:stock",
        stockKey: "c:stock-qty",
        tasks,
        stock: STOCK,
        workMs: WORK_MS,
      });
      const stats1 = await commandStats(ctx.admin);
      const lockCalls = callsDelta(lib0, clientCalls(`lib-${cfg.lib.id}`));
      const workCalls = callsDelta(work0, clientCalls("bench-work"));
      const sql = callsDelta(sql0, sqlCalls(`lib-${cfg.lib.id}`));
      const onRedis = !others.includes(cfg.lib);
      const server = statsDelta(stats0, stats1);
      if (cfg.profile === "recommended" && onRedis) {
        const bare = await contendBare(c, { key: "c:bare", tasks });
        col.add(cfg.row, "bareWallMs", bare.wallMs);
        if (bare.failed > 0)
          notes.push(`${cfg.row} round ${round}: ${bare.failed} of the no-work holds failed.`);
      }
      await c.close();
      const acq = Math.max(1, out.acquired);
      col.add(cfg.row, "wallMs", out.wallMs);
      col.add(cfg.row, "timeouts", out.timeouts);
      col.add(cfg.row, "finalStock", out.finalStock);
      if (onRedis) {
        col.add(cfg.row, "lockCallsPerAcq", lockCalls.total / acq);
        col.add(cfg.row, "serverCmdsPerAcq", (sum(server) - workCalls.total) / acq);
      } else col.add(cfg.row, "sqlPerAcq", sql.total / acq);
      col.add(cfg.row, "overlaps", out.overlaps);
      if (out.errors > 0) notes.push(`${cfg.row} round ${round}: ${out.errors} acquire/release errors.`);
      const scripts = (server.evalsha ?? 0) + (server.eval ?? 0);
      const sent = (lockCalls.byCommand.evalsha ?? 0) + (lockCalls.byCommand.eval ?? 0);
      if (scripts !== sent)
        notes.push(`${cfg.row} round ${round}: commandstats EVAL/EVALSHA ${scripts} ≠ ${sent} sent.`);
      if (round === 1 && cfg.lib.id !== "floor") {
        notes.push(
          onRedis
            ? `${cfg.row} lock calls sent in round 1: ${JSON.stringify(lockCalls.byCommand)}.`
            : `${cfg.row} SQL statements sent in round 1: ${JSON.stringify(sql.byCommand)}.`,
        );
      }
      progress(
        `(c) contended · ${cfg.lib.label} [${cfg.profile}] · round ${round}/${ctx.rounds}: ${out.wallMs.toFixed(0)} ms, ${out.timeouts} timeouts, stock ${out.finalStock}, ${((onRedis ? lockCalls : sql).total / acq).toFixed(1)} ${onRedis ? "lock calls" : "SQL statements"}/acq`,
      );
    }
  }
  const floorWall = col.values("floor", "wallMs");
  const rows: Row[] = configs.map((cfg) => ({
    id: cfg.row,
    label: cfg.lib.label,
    profile:
      cfg.row === "floor" ? "–" : cfg.profile === "seed" ? "seed: 100 ms retry, 5 s wait" : "recommended",
    values: { ...col.spreads(cfg.row), xFloor: spread(ratios(col.values(cfg.row, "wallMs"), floorWall)) },
  }));
  const ly = (p: Profile) => rows.find((r) => r.id === `${ctx.lockyard.id}@${p}`);
  const rec = ly("recommended");
  if (rec) {
    rec.targets = [
      target("wall time ≤ 1.5× the floor", rec.values.xFloor!.median, "<=", 1.5, "×"),
      target("≤ 3 lock calls per acquisition", rec.values.lockCallsPerAcq!.median, "<=", 3),
    ];
  }
  const seedRow = ly("seed");
  if (seedRow) {
    seedRow.targets = [
      target("0 timeouts with the seed's settings (worst run)", seedRow.values.timeouts!.max, "<=", 0),
    ];
  }
  const result: ScenarioResult = {
    id: "c",
    title: `(c) Contended: ${tasks} tasks on one key, GET → ${WORK_MS} ms → SET stock−1, from stock ${STOCK}`,
    columns: [
      { key: "wallMs", header: "wall ms", digits: 0 },
      { key: "xFloor", header: "× floor", digits: 2 },
      { key: "timeouts", header: "timeouts", digits: 0 },
      { key: "finalStock", header: "final stock", digits: 0 },
      { key: "lockCallsPerAcq", header: "lock calls/acq", digits: 2 },
      { key: "serverCmdsPerAcq", header: "Redis cmds/acq incl. in scripts", digits: 1 },
      { key: "overlaps", header: "overlapping holds", digits: 0 },
      { key: "bareWallMs", header: "no work under the lock: wall ms", digits: 0 },
      ...(others.length ? [{ key: "sqlPerAcq", header: "SQL statements/acq (PostgreSQL)", digits: 2 }] : []),
    ],
    rows,
    settings,
    notes,
  };
  notes.unshift(
    `No work under the lock: after each timed run with the recommended settings, the same ${tasks} tasks on another key acquire and release at once, sending nothing in between: what a handoff alone costs.`,
  );
  const measured = pgVersusRedis(result);
  if (measured) notes.unshift(measured);
  return result;
}
