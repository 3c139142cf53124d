import type { AsyncLocalStorage } from "node:async_hooks";
import { parseConfig } from "../../src/config.js";
import { forgetUnansweredGrants } from "../../src/core/early.js";
import { RedisLocksCore } from "../../src/redis/redis-locks.js";
import type { RedisClient } from "../../src/redis/scripts/index.js";
import { createSimBackend, SimConnection, type SimSubscriber } from "./backend.js";
import { checkKinds, QUEUE_LEASE } from "./kinds-check.js";
import { scheduleKindsFaults } from "./kinds-faults.js";
import { KindsState, type KProc } from "./kinds-state.js";
import { KindsTasks, SEMAPHORES, TASKS } from "./kinds-tasks.js";
import { LEASE } from "./kinds-track.js";
import { ModelRedis } from "./model.js";
import type { SimNodeSubscriber } from "./redlock.js";
import { Rng } from "./rng.js";
import type { SimResult } from "./run.js";
import { SimSharedClient } from "./shared-client.js";
import { drawWeather, wakeBoundOf } from "./weather.js";
import { SimProcess, World } from "./world.js";

export interface KindsOptions {
  processes?: number;
  tasks?: number;
  horizonMs?: number;
  fullTrace?: boolean;
  /** A held lock key vanishes, and in some runs Redis restarts empty (as run.ts's `keyLoss`). */
  keyLoss?: boolean;
  /** A give-up (an abort, or close()) in the tick of a release (as run.ts's `sameTick`). */
  sameTick?: boolean;
}

/** As in run.ts: a refused waiter's timer runs up to its PTTL, so a missed wake-up shows (500 ms would hide it). */
const RETRY_MAX = 5_000;

/**
 * One seed of semaphores, read-write locks and multi-resource acquires (`--kinds`), each process a real
 * RedisLocksCore: the mutex over the simulated mutex store (backend.ts), the semaphores and read-write locks
 * over the library's own shared-lock store (src/redis/shared-backend.ts) on a simulated client
 * (shared-client.ts), all on one faulty connection per process, as they share one ioredis client.
 */
export async function runKindsSeed(seed: number, opts: KindsOptions = {}): Promise<SimResult> {
  // The previous seed's world stopped with whatever was in flight: its early grants are never answered.
  forgetUnansweredGrants();
  const world = new World(seed, opts.fullTrace);
  const { rng } = world;
  const { stormy, faults } = drawWeather(rng);
  const redis = new ModelRedis(() => world.now);
  const permits = new Map(SEMAPHORES.map((r) => [r, rng.int(1, 3)]));
  // Some runs use a long watchdog lease: a refused waiter then sleeps up to seconds (its PTTL), so only the
  // release message (or its recovery) wakes it in time. From a stream of its own.
  const lease = new Rng((seed * 104_729 + 5) >>> 0).chance(0.25) ? 3_000 : LEASE;
  world.log(`permits ${JSON.stringify([...permits])}, lease ${lease} ms`);
  const silentMs = opts.keyLoss ? lease : 0;
  const s = new KindsState(world, () => redis, faults, permits, wakeBoundOf(faults, silentMs));
  if (opts.sameTick) s.sameTick = new Rng((seed * 92_821 + 19) >>> 0);
  const tasks = new KindsTasks(s, rng);
  const mutexSubs = new Set<SimSubscriber>();
  const sharedSubs = new Set<SimNodeSubscriber>();
  const afterRun = () => {
    for (const [channel, message, instance] of redis.published.splice(0)) {
      // A handoff reaches only the subscriber of the process it names (the model's third element).
      if (instance !== undefined) {
        const resource = channel.slice(3, -(instance.length + 1));
        for (const x of mutexSubs) if (x.instance === instance) x.deliver(resource, message);
      } else if (channel.startsWith("ch:")) for (const x of mutexSubs) x.deliver(channel.slice(3), message);
      else for (const x of sharedSubs) x.deliver(channel, message);
    }
  };
  const nProcs = opts.processes ?? rng.int(2, 3);
  for (let i = 0; i < nProcs; i++) {
    const sim = new SimProcess(world, `p${i}`);
    const conn = new SimConnection(world, sim, faults, afterRun);
    const backend = createSimBackend({
      world,
      proc: sim,
      conn,
      redis: () => redis,
      faults,
      subscribers: mutexSubs,
      queueLeaseMs: QUEUE_LEASE,
    });
    const mine = new Set<SimNodeSubscriber>();
    const client = new SimSharedClient(world, sim, faults, conn, s.shared, (x) => {
      mine.add(x);
      sharedSubs.add(x);
    });
    const cfg = parseConfig(
      {
        leaseMs: lease,
        waitMs: 1_000,
        instanceId: `p${i}`,
        retry: { maxMs: RETRY_MAX, minMs: 5, jitterMs: 10, queueLeaseMs: QUEUE_LEASE },
        onEvent: tasks.multi.onEvent,
      },
      { clock: sim.clock, random: () => rng.next() },
    );
    const locks = new RedisLocksCore(backend, cfg, client as unknown as RedisClient, (b) => b);
    const subscribers = () => [...(backend.subscriber() ? [backend.subscriber()!] : []), ...mine];
    s.procs.push({ sim, conn, locks, closed: false, crashed: false, pausedTotal: 0, subscribers });
  }

  let unfinished = 0;
  const unfinishedOf = new Map<KProc, number>();
  const nTasks = opts.tasks ?? 40;
  for (let i = 0; i < nTasks; i++) {
    const p = rng.pick(s.procs);
    const task = rng.pick(TASKS);
    unfinishedOf.set(p, (unfinishedOf.get(p) ?? 0) + 1);
    world.at(
      rng.int(0, 2_000),
      () => {
        void tasks.run(p, task).finally(() => unfinishedOf.set(p, unfinishedOf.get(p)! - 1));
      },
      p.sim,
    );
  }
  const horizon = opts.horizonMs ?? 30_000;
  scheduleKindsFaults(s, { seed, stormy, keyLoss: opts.keyLoss === true, horizon });

  const unhandled = (reason: unknown) =>
    s.fail(`unhandled rejection: ${String((reason as Error)?.stack ?? reason)}`);
  process.on("unhandledRejection", unhandled);
  try {
    await world.run(horizon, () => {
      if (!s.violation) checkKinds(s);
    });
    if (!s.violation) {
      // A crashed process never finishes anything; every other call settles.
      for (const [p, n] of unfinishedOf) if (!p.crashed) unfinished += n;
      if (unfinished > 0) s.fail(`${unfinished} task(s) still pending after ${horizon} virtual ms (a hang)`);
      const stuck = [...s.pending, ...s.multis].filter((w) => !w.proc.crashed);
      if (stuck.length > 0) s.fail(`${stuck.length} acquire(s) never settled (a hang)`);
      for (const p of s.procs) {
        if (!p.closed || p.crashed) continue;
        if (p.sim.timers.size > 0) s.fail(`${p.sim.name}: ${p.sim.timers.size} timer(s) left after close()`);
        if (p.subscribers().some((x) => !x.closed))
          s.fail(`${p.sim.name}: subscriber left open after close()`);
      }
    }
  } finally {
    process.off("unhandledRejection", unhandled);
    for (const p of s.procs) if (!p.closed) await p.locks.close();
    // Each seed's AsyncLocalStorage instances must be disabled (run.ts explains why).
    tasks.multi.multiScope.disable();
    for (const p of s.procs) disableScopes(p.locks);
  }
  const { events, acquired, keysLost, multi, upgrades, contended } = s.stats;
  return {
    seed,
    ok: !s.violation,
    violation: s.violation,
    trace: world.trace,
    stats: {
      events,
      acquired,
      sold: 0,
      keysLost,
      handoffs: redis.handoffs.queued + redis.handoffs.next,
      handedToLeaver: redis.handoffs.toLeaver,
      early: s.earlyHolds.length,
      byMessage: s.byMessage,
      earlyRefused: s.earlyHolds.filter(
        (h) => (h as { lostError?: { reason: string } }).lostError?.reason === "handoff-refused",
      ).length,
      multi,
      upgrades,
      contended,
      placesPassed: s.shared.placesPassed,
      permitsHanded: s.shared.permitsHanded,
    },
  };
}

/** The withLock scopes of a RedisLocksCore: the mutex's, the semaphores' and the read-write locks' (one). */
function disableScopes(locks: unknown): void {
  type WithScope = { scope?: { als?: AsyncLocalStorage<unknown> } } | undefined;
  const of = (core: unknown) => (core as WithScope)?.scope?.als?.disable();
  const l = locks as { semaphores?: { core?: unknown }; readWrites?: { sides?: { read: unknown } } };
  of(locks);
  of(l.semaphores?.core);
  of(l.readWrites?.sides?.read);
}
