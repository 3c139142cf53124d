// One process of scenario (f), forked by cross-process.ts: its share of the contended deduction on one key, with
// its own connections, started by the parent's barrier. Commands are counted here, in the process that sends
// them, and the totals go back over IPC.
import { createLocks } from "@lockyard/lock";
import { Cluster, type Redis } from "ioredis";
import { floor } from "../contenders/floor.js";
import { lockyard } from "../contenders/lockyard.js";
import { locksContender, lockyardOptions } from "../contenders/lockyard-common.js";
import { lockyardConfirmed } from "../contenders/lockyard-confirmed.js";
import { redisSemaphore } from "../contenders/redis-semaphore.js";
import { redlock } from "../contenders/redlock.js";
import { seedDesign } from "../contenders/seed.js";
import type { Contender, ContenderFactory } from "../contenders/types.js";
import { callsDelta, clientCalls, connect, installCommandCounter } from "../harness/connections.js";
import type { Hold } from "../harness/timeline.js";
import { contendOnce, deductTask } from "./contend-once.js";

export interface WorkerSpec {
  /** A contender id: floor, lockyard, redis-semaphore, redlock or seed. */
  lib: string;
  redisUrl: string;
  /** Set for Lockyard on a Redis Cluster: the lock and the work both go through ioredis `Cluster` clients. */
  clusterNodes?: { host: string; port: number }[];
  /** This process's index among the P, for its warm-up key. */
  index: number;
  tasks: number;
  key: string;
  stockKey: string;
  workMs: number;
}

export interface WorkerResult {
  acquired: number;
  timeouts: number;
  errors: number;
  /** Tasks that saw stock > 0 and wrote stock − 1: the units this process sold. */
  decrements: number;
  /** ms from each task's acquire call to its lock, for the tasks that got one. */
  waits: number[];
  /** Each hold, on the machine's monotonic clock (comparable across the processes), for the parent's timeline. */
  holds: Hold[];
  /** How long each hold's first command (the GET) took: the part of a hold that a lock's own traffic can delay. */
  readMs: number[];
  /** Top-level commands the library's connections sent during the timed run, by command (housekeeping left out). */
  lockCalls: Record<string, number>;
  lockCallsTotal: number;
}

export type ToWorker = { type: "spec"; spec: WorkerSpec } | { type: "go" } | { type: "close" };
export type FromWorker =
  | { type: "ready"; settings: string }
  | { type: "done"; result: WorkerResult }
  | { type: "closed" }
  | { type: "error"; message: string };

/**
 * performance.now() is per process; CLOCK_MONOTONIC (process.hrtime) is one clock for the whole machine on Linux.
 * Their difference, read between two hrtime readings (the closest pair of a few, as the first calls of each are
 * slow), turns each hold's ends into ms every process agrees on.
 */
function sharedClockOffsetMs(): number {
  let best = { width: Number.POSITIVE_INFINITY, offset: 0 };
  for (let i = 0; i < 20; i++) {
    const before = Number(process.hrtime.bigint()) / 1e6;
    const now = performance.now();
    const after = Number(process.hrtime.bigint()) / 1e6;
    if (after - before < best.width) best = { width: after - before, offset: (before + after) / 2 - now };
  }
  return best.offset;
}

const FACTORIES: Record<string, ContenderFactory> = Object.fromEntries(
  [floor, lockyard, lockyardConfirmed, redisSemaphore, redlock, seedDesign].map((f) => [f.id, f]),
);

const inbox: ToWorker[] = [];
let waiting: ((m: ToWorker) => void) | null = null;
process.on("message", (m: ToWorker) => {
  if (waiting) {
    const w = waiting;
    waiting = null;
    w(m);
  } else inbox.push(m);
});

async function receive<T extends ToWorker["type"]>(type: T): Promise<Extract<ToWorker, { type: T }>> {
  const m = inbox.shift() ?? (await new Promise<ToWorker>((resolve) => (waiting = resolve)));
  if (m.type !== type) throw new Error(`expected "${type}" from the parent, got "${m.type}"`);
  return m as Extract<ToWorker, { type: T }>;
}

const send = (m: FromWorker): Promise<void> =>
  new Promise((resolve, reject) => process.send!(m, undefined, {}, (err) => (err ? reject(err) : resolve())));

/** Lockyard with its recommended settings on a Cluster client named like the single-Redis one, so it is counted. */
async function lockyardOnCluster(nodes: { host: string; port: number }[]): Promise<Contender> {
  const redis = new Cluster(nodes, { redisOptions: { connectionName: `lib-${lockyard.id}` } });
  await pingMasters(redis);
  const { opts, text } = lockyardOptions({ profile: "recommended" }, "createLocks", "");
  const locks = createLocks({ redis, ...opts });
  return locksContender(
    locks,
    `@lockyard/lock ${text}; one ioredis Cluster client plus its subscriber`,
    async () => {
      redis.disconnect();
    },
  );
}

/** Connections to every master made before the timed run, as a long-running process would have them. */
async function pingMasters(c: Cluster): Promise<void> {
  await c.ping();
  await Promise.all(c.nodes("master").map((n) => n.ping()));
}

async function runShare(
  c: Contender,
  work: Redis,
  spec: WorkerSpec,
): Promise<Omit<WorkerResult, "lockCalls" | "lockCallsTotal">> {
  const outcomes = await Promise.all(Array.from({ length: spec.tasks }, () => deductTask(c, work, spec)));
  const offset = sharedClockOffsetMs();
  const held = outcomes.filter((o) => o.kind === "held");
  return {
    acquired: held.length,
    timeouts: outcomes.filter((o) => o.kind === "timeout").length,
    errors: outcomes.filter((o) => o.kind === "error").length + held.filter((o) => o.releaseFailed).length,
    decrements: held.filter((o) => o.decremented).length,
    waits: held.map((o) => o.waitedMs),
    holds: held.map((o): Hold => [o.heldFrom + offset, o.heldTo + offset]),
    readMs: held.map((o) => o.readMs),
  };
}

async function main(): Promise<void> {
  installCommandCounter();
  const { spec } = await receive("spec");
  const factory = FACTORIES[spec.lib];
  if (!factory) throw new Error(`unknown contender ${spec.lib}`);
  let c: Contender;
  let work: Redis;
  if (spec.clusterNodes) {
    if (spec.lib !== lockyard.id) throw new Error("only Lockyard runs on the Cluster in (f)");
    c = await lockyardOnCluster(spec.clusterNodes);
    const w = new Cluster(spec.clusterNodes, { redisOptions: { connectionName: "bench-work" } });
    await pingMasters(w);
    work = w as unknown as Redis;
  } else {
    c = await factory.create(spec.redisUrl, { profile: "recommended" });
    work = await connect(spec.redisUrl, "bench-work");
  }
  // Warm-up on a key of this process's own: scripts loaded, JIT warm, a subscriber connection opened where
  // there is one (as in (c)).
  await contendOnce(c, work, {
    key: `f:warm:${spec.index}`,
    stockKey: `f:warm-stock:${spec.index}`,
    tasks: 20,
    stock: 10,
    workMs: spec.workMs,
  });
  await send({ type: "ready", settings: c.settings });
  await receive("go");
  const before = clientCalls(`lib-${spec.lib}`);
  const out = await runShare(c, work, spec);
  const calls = callsDelta(before, clientCalls(`lib-${spec.lib}`));
  await send({ type: "done", result: { ...out, lockCalls: calls.byCommand, lockCallsTotal: calls.total } });
  await receive("close");
  await c.close();
  work.disconnect();
  await send({ type: "closed" });
  process.exit(0);
}

main().catch(async (err: unknown) => {
  await send({
    type: "error",
    message: err instanceof Error ? (err.stack ?? err.message) : String(err),
  }).catch(() => {});
  process.exit(1);
});
