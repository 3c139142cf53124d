import { createLocks, type Locks } from "@lockyard/lock";
import { Cluster, Redis } from "ioredis";
import { lockyardOptions } from "../contenders/lockyard-common.js";
import type { Contender } from "../contenders/types.js";
import { Collector } from "../harness/collect.js";
import { progress } from "../harness/progress.js";
import { repoPath } from "../harness/repo.js";
import { ratios, rotate, spread } from "../harness/stats.js";
import { contendOnce } from "./contend-once.js";
import type { BenchContext, Row, ScenarioResult } from "./types.js";

const TASKS = 200;
const STOCK = 100;
const WORK_MS = 1;

interface ClusterLib {
  startCluster(opts?: {
    masters?: number;
  }): Promise<{ nodes: { host: string; port: number }[]; stop(): Promise<void> }>;
}

type Topology = "single" | "cluster";
interface Config {
  row: string;
  topology: Topology;
  /** Locks instances (each with its own connections) the tasks are spread over, as API instances would be. */
  instances: number;
}

const CONFIGS: Config[] = [
  { row: "single-1", topology: "single", instances: 1 },
  { row: "cluster-1", topology: "cluster", instances: 1 },
  { row: "single-2", topology: "single", instances: 2 },
  { row: "cluster-2", topology: "cluster", instances: 2 },
];

/**
 * (h) What a Cluster costs: scenario (c) (tasks on one key, GET → 1 ms → SET stock−1 under Lockyard's lock with
 * its recommended settings) on one redis-server and on a 3-master Redis Cluster started for it, with every task
 * in one Locks, and spread over two Locks instances with their own connections (as two API instances). The
 * lock's keys sit on one master either way; what differs is the Cluster client (slot routing, SSUBSCRIBE on a
 * sharded subscriber).
 */
export async function clusterCost(ctx: BenchContext): Promise<ScenarioResult> {
  const tasks = ctx.quick ? 50 : TASKS;
  const lib = (await import(repoPath("scripts/lib/cluster.mjs"))) as ClusterLib;
  const cluster = await lib.startCluster({ masters: 3 });
  progress(`(h) cluster: 3 masters on ${cluster.nodes.map((n) => n.port).join(", ")}`);
  const { opts, text } = lockyardOptions({ profile: "recommended" }, "createLocks", "");
  const client = (t: Topology) => (t === "single" ? new Redis(ctx.redisUrl) : new Cluster(cluster.nodes));
  const col = new Collector();
  const notes: string[] = [];
  try {
    for (let round = 1; round <= ctx.rounds; round++) {
      for (const cfg of rotate(CONFIGS, round)) {
        await ctx.admin.flushall();
        const conns = Array.from({ length: cfg.instances }, () => client(cfg.topology));
        const work = client(cfg.topology);
        await Promise.all([...conns, work].map((c) => c.ping()));
        const locks = conns.map((redis, i) => createLocks({ redis, instanceId: `bench-h-${i}`, ...opts }));
        const c = spreadOver(locks, async () => {
          for (const r of [...conns, work]) r.disconnect();
        });
        const w = work as unknown as Redis;
        await contendOnce(c, w, {
          key: "h:warm",
          stockKey: "h:warm-stock",
          tasks: 20,
          stock: 10,
          workMs: WORK_MS,
        });
        const out = await contendOnce(c, w, {
          key: "h:stock",
          stockKey: "h:stock-qty",
          tasks,
          stock: STOCK,
          workMs: WORK_MS,
        });
        await c.close();
        col.add(cfg.row, "wallMs", out.wallMs);
        col.add(cfg.row, "timeouts", out.timeouts);
        col.add(cfg.row, "finalStock", out.finalStock);
        col.add(cfg.row, "overlaps", out.overlaps);
        if (out.errors > 0) notes.push(`${cfg.row} round ${round}: ${out.errors} acquire/release errors.`);
        progress(
          `(h) cluster cost · ${cfg.topology} × ${cfg.instances} · round ${round}/${ctx.rounds}: ${out.wallMs.toFixed(0)} ms, ${out.timeouts} timeouts, stock ${out.finalStock}`,
        );
      }
    }
  } finally {
    await cluster.stop();
  }
  const rows: Row[] = CONFIGS.map((cfg) => {
    const same = `single-${cfg.instances}`;
    return {
      id: cfg.row,
      label: `Lockyard, ${cfg.topology === "single" ? "one Redis" : "3-master Cluster"}`,
      profile: cfg.instances === 1 ? "one Locks" : `${cfg.instances} Locks, own connections`,
      values: {
        ...col.spreads(cfg.row),
        xSingle: spread(ratios(col.values(cfg.row, "wallMs"), col.values(same, "wallMs"))),
      },
    };
  });
  return {
    id: "h",
    title: `(h) One Redis vs a Redis Cluster: ${tasks} tasks on one key, GET → ${WORK_MS} ms → SET stock−1, from stock ${STOCK}`,
    rowHeader: "store",
    columns: [
      { key: "wallMs", header: "wall ms", digits: 0 },
      { key: "xSingle", header: "× one Redis", digits: 2 },
      { key: "timeouts", header: "timeouts", digits: 0 },
      { key: "finalStock", header: "final stock", digits: 0 },
      { key: "overlaps", header: "overlapping holds", digits: 0 },
    ],
    rows,
    settings: { lockyard: `@lockyard/lock ${text}; ioredis Redis or Cluster with default options` },
    notes,
  };
}

/** Tasks take turns over the Locks instances, as a burst spread over API instances. */
function spreadOver(locks: Locks[], closeStores: () => Promise<void>): Contender {
  let next = 0;
  return {
    settings: "",
    async acquire(key) {
      const l = locks[next++ % locks.length]!;
      try {
        const h = await l.acquire(key);
        return { release: async () => void (await h.release()) };
      } catch (err) {
        if ((err as Error).name === "LockTimeoutError") return null;
        throw err;
      }
    },
    async close() {
      await Promise.all(locks.map((l) => l.close()));
      await closeStores();
    },
  };
}
