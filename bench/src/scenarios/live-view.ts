import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { createLocks, type LockHandle } from "@lockyard/lock";
import type { Redis } from "ioredis";
import { apiServerPath, startApi } from "../harness/api-instances.js";
import { Collector, target } from "../harness/collect.js";
import { commandStats, statsDelta, sum } from "../harness/commandstats.js";
import { connect } from "../harness/connections.js";
import { openLockStream } from "../harness/lock-stream.js";
import { pool } from "../harness/pool.js";
import { processCpuSeconds } from "../harness/proc-cpu.js";
import { progress } from "../harness/progress.js";
import { redisCpuSeconds } from "../harness/redis-cpu.js";
import { repoPath } from "../harness/repo.js";
import { percentile, rotate } from "../harness/stats.js";
import type { BenchContext, ScenarioResult, TargetResult } from "./types.js";

const OTHER_KEYS = 200_000;
const HELD_LOCKS = 1_000;
const SUBSCRIBERS = [0, 1, 5, 50] as const;
/** A new churn lock every CHURN_EVERY_MS, each held for CHURN_HOLD_MS: 10 adds and 10 removals per second. */
const CHURN_EVERY_MS = 100;
const CHURN_HOLD_MS = 300;
/** A change not seen by every subscriber this long after the churn ends counts as missed. */
const DRAIN_MS = 5_000;
/** Idle windows span at least one heartbeat interval (10 s). */
const IDLE_SECONDS = 11;
const P99_LIMIT_MS = 250;
const EXTRA_CPU_LIMIT = 10;
const NOISE_CPU = 2;
const IDLE_BYTES_LIMIT = 50;
const TITLE = `(g) Live view: ${HELD_LOCKS.toLocaleString("en-US")} held locks among ${OTHER_KEYS.toLocaleString("en-US")} other keys, locks.watch on both API instances`;

/** 200 000 unrelated string keys, the bulk of a production keyspace, written in pipelines of 10 000. */
async function fillOtherKeys(admin: Redis): Promise<void> {
  for (let base = 0; base < OTHER_KEYS; base += 10_000) {
    const p = admin.pipeline();
    for (let i = base; i < Math.min(OTHER_KEYS, base + 10_000); i++) p.set(`other:${i}`, `value-${i}`);
    await p.exec();
  }
}

interface Change {
  key: string;
  kind: "add" | "remove";
  at: number;
}

interface Measured {
  p50: number;
  p99: number;
  missed: number;
  churnCpu: number;
  idleCpu: number;
  idleBytes: number;
  idleCmds: number;
  apiIdleCpu: number;
}

/** One measurement with `n` subscribers spread over the instances: churn (latency, CPU), then idle (bytes, CPU). */
async function measure(
  ctx: BenchContext,
  urls: string[],
  apiCpu: () => number,
  churn: ReturnType<typeof createLocks>,
  n: number,
  tag: string,
  churnSeconds: number,
  idleSeconds: number,
): Promise<Measured> {
  const seen = Array.from({ length: n }, () => new Map<string, number>());
  const streams = Array.from({ length: n }, (_, i) =>
    openLockStream(urls[i % urls.length]!, (added, removed, now) => {
      for (const k of added) if (!seen[i]!.has(`add ${k}`)) seen[i]!.set(`add ${k}`, now);
      for (const k of removed) if (!seen[i]!.has(`remove ${k}`)) seen[i]!.set(`remove ${k}`, now);
    }),
  );
  try {
    await Promise.race([
      Promise.all(streams.map((s) => s.ready)),
      sleep(120_000, undefined, { ref: false }).then(() =>
        Promise.reject(new Error("subscribers got no first snapshot in 120 s")),
      ),
    ]);
    await sleep(1_000);

    // Churn: acquire a fresh key every CHURN_EVERY_MS, release it CHURN_HOLD_MS later.
    const changes: Change[] = [];
    const cpu0 = await redisCpuSeconds(ctx.admin);
    const t0 = performance.now();
    const ops: Promise<void>[] = [];
    for (let k = 0; performance.now() - t0 < churnSeconds * 1000; k++) {
      const key = `lock:{g:churn:${tag}:${k}}`;
      ops.push(
        (async () => {
          const at = performance.now();
          const h: LockHandle = await churn.acquire(`g:churn:${tag}:${k}`, { leaseMs: 30_000 });
          changes.push({ key, kind: "add", at });
          await sleep(CHURN_HOLD_MS);
          changes.push({ key, kind: "remove", at: performance.now() });
          await h.release();
        })(),
      );
      await sleep(Math.max(0, t0 + (k + 1) * CHURN_EVERY_MS - performance.now()));
    }
    await Promise.all(ops);
    const churnCpu = (((await redisCpuSeconds(ctx.admin)) - cpu0) / ((performance.now() - t0) / 1000)) * 100;

    const seenAll = () => changes.every((c) => seen.every((m) => m.has(`${c.kind} ${c.key}`)));
    const drainUntil = performance.now() + DRAIN_MS;
    while (n > 0 && !seenAll() && performance.now() < drainUntil) await sleep(20);
    const latencies: number[] = [];
    let missed = 0;
    if (n > 0) {
      for (const c of changes) {
        const times = seen.map((m) => m.get(`${c.kind} ${c.key}`));
        if (times.some((t) => t === undefined)) missed++;
        else latencies.push(Math.max(...(times as number[])) - c.at);
      }
    }

    // Idle: nothing changes; what do subscribers receive and what does Redis spend?
    await sleep(500);
    const bytes0 = streams.map((s) => s.bytes);
    const api0 = apiCpu();
    const stats0 = await commandStats(ctx.admin);
    const idle0 = await redisCpuSeconds(ctx.admin);
    const i0 = performance.now();
    await sleep(idleSeconds * 1000);
    const idleS = (performance.now() - i0) / 1000;
    const idleCpu = (((await redisCpuSeconds(ctx.admin)) - idle0) / idleS) * 100;
    const idleCmds = sum(statsDelta(stats0, await commandStats(ctx.admin))) / idleS;
    const apiIdleCpu = ((apiCpu() - api0) / idleS) * 100;
    const idleBytes =
      n > 0 ? streams.reduce((a, s, i) => a + (s.bytes - bytes0[i]!), 0) / n / idleS : Number.NaN;
    return {
      p50: percentile(latencies, 50),
      p99: missed > 0 ? Number.POSITIVE_INFINITY : percentile(latencies, 99),
      missed,
      churnCpu,
      idleCpu,
      idleBytes,
      idleCmds,
      apiIdleCpu,
    };
  } finally {
    for (const s of streams) s.close();
  }
}

/**
 * (g) The dashboard's live view on a production-sized keyspace: how fast a new or released lock reaches every
 * `locks.watch` subscriber, what Redis spends for 0, 1, 5 and 50 subscribers, and what an idle subscriber receives.
 * Runs the API given by --api-server (default apps/api/dist/server.js), so the seed's live view can be measured too.
 */
export async function liveView(ctx: BenchContext): Promise<ScenarioResult> {
  const server = ctx.apiServer ?? apiServerPath();
  const base = { id: "g", title: TITLE, columns: [], rows: [], settings: {}, notes: [] };
  if (!existsSync(server))
    return { ...base, pending: `${server} does not exist yet (the API is not built).` };
  const churnSeconds = ctx.quick ? 2 : 5;
  const idleSeconds = ctx.quick ? 3 : IDLE_SECONDS;
  const { freePort } = (await import(repoPath("scripts/lib/ports.mjs"))) as { freePort(): Promise<number> };

  await ctx.admin.flushall();
  progress(`(g) live view · writing ${OTHER_KEYS.toLocaleString("en-US")} other keys`);
  await fillOtherKeys(ctx.admin);
  const holderConn = await connect(ctx.redisUrl, "bench-g-holder");
  const churnConn = await connect(ctx.redisUrl, "bench-g-churn");
  const holder = createLocks({ redis: holderConn, instanceId: "bench-holder" });
  const churn = createLocks({ redis: churnConn, instanceId: "bench-churn" });
  const held: LockHandle[] = [];
  await pool(HELD_LOCKS, 50, async (i) => {
    held.push(await holder.acquire(`g:held:${i}`, { leaseMs: 3_600_000 }));
  });

  // Jobs off: their lock would change every 5 s and the idle window must have no lock changing.
  const instances = await startApi(ctx.redisUrl, [await freePort(), await freePort()], {
    server,
    // 50 dashboards come from 50 addresses; here they all come from 127.0.0.1.
    env: { JOB_INTERVAL_MS: "3600000", MAX_STREAMS_PER_CLIENT: "100" },
  }).catch((err: Error) => err);
  if (instances instanceof Error) {
    await Promise.all([holder.close(), churn.close()]);
    holderConn.disconnect();
    churnConn.disconnect();
    return { ...base, pending: `the API did not start: ${instances.message}` };
  }
  const apiCpu = () => instances.pids.reduce((a: number, pid) => a + processCpuSeconds(pid), 0);
  const col = new Collector();
  try {
    progress(`(g) live view · API at ${instances.urls.join(", ")} (${server})`);
    for (let round = 1; round <= ctx.rounds; round++) {
      const byN = new Map<number, Measured>();
      for (const n of rotate(SUBSCRIBERS, round)) {
        // Let observers that lost their last subscriber stop (they may linger a few seconds).
        await sleep(n === 0 ? 6_000 : 1_000);
        const m = await measure(
          ctx,
          instances.urls,
          apiCpu,
          churn,
          n,
          `${round}-${n}`,
          churnSeconds,
          idleSeconds,
        );
        byN.set(n, m);
        for (const [k, v] of Object.entries(m)) col.add(`n${n}`, k, v);
        progress(
          `(g) live view · ${n} subscribers · round ${round}/${ctx.rounds}: p50 ${m.p50.toFixed(0)} ms, p99 ${m.p99.toFixed(0)} ms, ${m.missed} missed, Redis ${m.churnCpu.toFixed(1)} % churning / ${m.idleCpu.toFixed(1)} % idle (${m.idleCmds.toFixed(0)} cmds/s), ${Number.isFinite(m.idleBytes) ? m.idleBytes.toFixed(0) : "–"} B/s per idle subscriber`,
        );
      }
      for (const n of SUBSCRIBERS) {
        col.add(`n${n}`, "extraCpu", byN.get(n)!.churnCpu - byN.get(0)!.churnCpu);
        col.add(`n${n}`, "vsOne", byN.get(n)!.churnCpu - byN.get(1)!.churnCpu);
      }
    }
  } catch (err) {
    return { ...base, pending: `the live-view scenario failed: ${(err as Error).message}` };
  } finally {
    await instances.stop();
    await pool(held.length, 50, async (i) => {
      await held[i]!.release().catch(() => undefined);
    });
    await Promise.all([holder.close(), churn.close()]);
    holderConn.disconnect();
    churnConn.disconnect();
  }

  const med = (n: number, metric: string) => col.spreads(`n${n}`)[metric]?.median ?? Number.NaN;
  const targets = (n: number): TargetResult[] | undefined => {
    if (n === 0) return undefined;
    const out = [
      target(
        `new/released lock reaches all ${n} subscribers, p99 ≤ ${P99_LIMIT_MS} ms`,
        med(n, "p99"),
        "<=",
        P99_LIMIT_MS,
        " ms",
      ),
      target(
        `idle bytes/s per subscriber ≤ ${IDLE_BYTES_LIMIT} (near zero)`,
        med(n, "idleBytes"),
        "<=",
        IDLE_BYTES_LIMIT,
        " B/s",
      ),
    ];
    if (n > 1) {
      out.push(
        target(
          `${n} subscribers: Redis CPU ≤ +${EXTRA_CPU_LIMIT} % of a core over none`,
          med(n, "extraCpu"),
          "<=",
          EXTRA_CPU_LIMIT,
          " %",
        ),
        target(
          `${n} subscribers: Redis CPU within ±${NOISE_CPU} % of a core of 1 subscriber`,
          Math.abs(med(n, "vsOne")),
          "<=",
          NOISE_CPU,
          " %",
        ),
      );
    }
    return out;
  };
  return {
    ...base,
    rowHeader: "subscribers",
    columns: [
      { key: "p50", header: "to all subscribers p50 ms", digits: 0 },
      { key: "p99", header: "p99 ms", digits: 0 },
      { key: "missed", header: "changes missed", digits: 0 },
      { key: "churnCpu", header: "Redis CPU % of a core, churning", digits: 1 },
      { key: "extraCpu", header: "… minus 0 subscribers", digits: 1 },
      { key: "idleCpu", header: "Redis CPU %, idle", digits: 1 },
      { key: "idleCmds", header: "Redis cmds/s, idle", digits: 0 },
      { key: "idleBytes", header: "idle B/s per subscriber", digits: 0 },
      { key: "apiIdleCpu", header: "API CPU %, idle (both)", digits: 1 },
    ],
    rows: SUBSCRIBERS.map((n) => ({
      id: `n${n}`,
      label: `${n}`,
      values: col.spreads(`n${n}`),
      targets: targets(n),
    })),
    settings: {
      api: `2 instances (${server}, LOG_LEVEL=warn, JOB_INTERVAL_MS=3600000 so no job lock changes, MAX_STREAMS_PER_CLIENT=100 since every subscriber comes from 127.0.0.1); subscribers are plain SSE GETs of /trpc/locks.watch with input {} (the dashboard's defaults), alternating between the instances`,
      keyspace: `${OTHER_KEYS.toLocaleString("en-US")} string keys other:<i>, plus ${HELD_LOCKS.toLocaleString("en-US")} Lockyard locks g:held:<i> held with a 1 h lease (no watchdog) by a separate connection`,
      churn: `a new Lockyard lock every ${CHURN_EVERY_MS} ms, each released ${CHURN_HOLD_MS} ms later, for ${churnSeconds} s; idle window ${idleSeconds} s`,
    },
    notes: [
      `Propagation is measured in the bench process from the moment the acquire (or release) is issued to the moment the subscriber's stream shows the key appear (or disappear); "to all subscribers" is the slowest subscriber for each change. A change some subscriber never saw within ${DRAIN_MS / 1000} s counts as missed and makes p99 infinite.`,
      `Redis CPU is the INFO cpu used_cpu_user+used_cpu_sys delta over the window, in % of one core; "minus 0 subscribers" and the ±${NOISE_CPU} % band against 1 subscriber are computed per round, then the median is taken. ${NOISE_CPU} % of a core is the noise band chosen for "the same as 1 subscriber".`,
      `Idle bytes are SSE body bytes per subscriber per second with no lock changing, the transport's own keep-alive pings included; "near zero" is taken as ≤ ${IDLE_BYTES_LIMIT} B/s.`,
    ],
  };
}
