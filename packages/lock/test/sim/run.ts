import { AsyncLocalStorage } from "node:async_hooks";
import type { Redis } from "ioredis";
import type { LockBackend } from "../../src/core/backend.js";
import { createLocksWithBackend } from "../../src/core/create.js";
import { forgetUnansweredGrants } from "../../src/core/early.js";
import { Gate } from "../../src/core/waiters.js";
import { LocksClosedError } from "../../src/errors.js";
import { createRedlockBackend } from "../../src/redlock/backend.js";
import type { LockHandle, Locks } from "../../src/types.js";
import { createSimBackend, SimConnection, type SimRedis, type SimSubscriber } from "./backend.js";
import { ModelRedis } from "./model.js";
import { SimNodeClient, type SimNodeSubscriber } from "./redlock.js";
import { Rng } from "./rng.js";
import { handedByTainted } from "./taint.js";
import { drawWeather, ORPHAN, settleBoundOf, wakeBoundOf } from "./weather.js";
import { SimProcess, World } from "./world.js";

/** Settings of one simulated run. */
export interface SimOptions {
  processes?: number;
  tasks?: number;
  /** Virtual ms the run may take before anything still pending counts as a hang. */
  horizonMs?: number;
  /** Keep the whole trace (a replay), not just its last few thousand lines. */
  fullTrace?: boolean;
  /** Workloads added after the catch table's first measurements (SIM_EXTRA=1): a long watchdog lease in some
   * runs, and an explicit re-entry that outlives its outer hold. Off by default until the bug they find at
   * seed 394 (README) is fixed. */
  extra?: boolean;
  /** Add the key-loss fault: a held lock key vanishes (eviction, a DEL by hand, a failover that lost it). */
  keyLoss?: boolean;
  /** Locks over Redlock (src/redlock, real code) on 3 or 5 simulated nodes instead of one Redis. */
  redlock?: boolean;
  /**
   * A release and a give-up in one tick (`--same-tick`): an acquire of the same resource in the releasing process
   * is aborted just before or just after the release is called (`h.release(); ac.abort()`), and now and then the
   * process is closed there instead. Its local waiter may be granted the lock early by that very release.
   */
  sameTick?: boolean;
  /**
   * A release in one process and a give-up in another at the same moment (`--peer-tick`): an acquire of the same
   * resource waiting in another process is aborted just before or just after the release is called. Its leave
   * then races the release's handoff, which may have just named that process's waiter.
   */
  peerTick?: boolean;
}

export interface SimResult {
  seed: number;
  ok: boolean;
  violation?: string;
  trace: string[];
  stats: { events: number; acquired: number; sold: number; keysLost: number; handoffs: number } & {
    /** Holds granted early (core/early.ts), and how many of them the store's answer took back. */
    early?: number;
    earlyRefused?: number;
    /** Holds taken from another process's handoff message (core/by-message.ts). */
    byMessage?: number;
    /** Leaves that found the lock handed to their waiter, which had given up meanwhile. */
    handedToLeaver?: number;
    /**
     * Kinds runs (kinds-run.ts): multi-resource acquires made, readers' upgrades granted, refused attempts, and
     * semaphore waiters that gave up passing their process's place in the queue on.
     */
    multi?: number;
    upgrades?: number;
    contended?: number;
    placesPassed?: number;
    /** Semaphore releases that granted the freed permit to their process's next waiter. */
    permitsHanded?: number;
  };
}

const LEASE = 300;
const RESOURCES = ["r1", "r2"];
const STOCK = "stock:{sim}";
const STOCK_LOCK = "stock-lock";
const INITIAL_STOCK = 5;
const RETRY_MAX = 5_000;
/** A queued waiter looks every third of this; a paused or dead one holds up the queue at most this long. */
const QUEUE_LEASE = 600;
const { boundMs: ORPHAN_BOUND, lossGraceMs: LOSS_GRACE, slowGraceMs: SLOW_GRACE } = ORPHAN;

interface Section {
  resource: string;
  parent: Section | undefined;
  active: boolean;
  /** Itself and the enclosing sections that were still running when it started. */
  liveAtStart: Section[];
  handle: LockHandle;
}

interface PendingAcquire {
  proc: Proc;
  resource: string;
  start: number;
  waitMs: number;
  pausedAtStart: number;
}

interface Proc {
  sim: SimProcess;
  /** Its connection (with Redlock: one of its node connections, picked at each kill). */
  conn: { kill(): void };
  /** Its connections (the single Redis's, or one per Redlock node): when their calls last failed or were slow (I11). */
  conns: SimConnection[];
  locks: Locks;
  closed: boolean;
  pausedTotal: number;
  handles: Set<LockHandle>;
  subscriber(): { kill(): void; readonly closed: boolean } | undefined;
  /** The single-Redis store's read of a lock's owners, sent as fencedRead sends one (backend.ts). */
  ownersRead?: (key: string, owner: string) => Promise<string[]>;
  /** Its acquires still waiting, with their abort controllers (`sameTick`). */
  waiting: Set<{ resource: string; ac: AbortController }>;
}

/** Runs one seed; never throws: a broken invariant is the result. */
export async function runSeed(seed: number, opts: SimOptions = {}): Promise<SimResult> {
  // The previous seed's world stopped with whatever was in flight: its early grants are never answered.
  forgetUnansweredGrants();
  const world = new World(seed, opts.fullTrace);
  const rng = world.rng;
  /** Choices added after the catch table's first measurements, from a stream of their own (see README). */
  const orderRng = new Rng((seed * 104_729 + 5) >>> 0);
  // Some runs use a long watchdog lease: a waiter refused by a long-held lock sleeps up to its PTTL, so a
  // release message it misses (a subscriber reconnect nobody acts on) leaves the lock free for seconds.
  const lease = opts.extra && orderRng.chance(0.25) ? 3_000 : LEASE;
  const { stormy, faults } = drawWeather(rng);
  const wakeBound = wakeBoundOf(faults, opts.keyLoss ? lease : 0);
  // With --extra, a subscriber sometimes dies with a release message in flight (catches defect 8 reverted).
  const dieRng = new Rng((seed * 65_537 + 11) >>> 0);
  if (opts.extra) faults.dieOnMessage = () => dieRng.chance(0.1);
  let redis = new ModelRedis(() => world.now);
  const subscribers = new Set<SimSubscriber>();
  const afterRun = () => {
    for (const [channel, message, instance] of redis.published.splice(0)) {
      // A handoff reaches only the subscriber of the process it names (the model's third element).
      const resource = instance === undefined ? channel.slice(3) : channel.slice(3, -(instance.length + 1));
      for (const s of subscribers)
        if (instance === undefined || s.instance === instance) s.deliver(resource, message);
    }
  };
  // Redlock: independent nodes, each a model of its own; the stock (not used with Redlock: no tokens) and
  // everything else stay on `redis`. Drawn from a stream of its own.
  const redlockRng = new Rng((seed * 2_654_435 + 7) >>> 0);
  // Its own stream, drawn only with --extra: a seed without it runs as before.
  const readRng = new Rng((seed * 48_271 + 13) >>> 0);
  // Its own stream too, drawn only with --same-tick.
  const tickRng = new Rng((seed * 92_821 + 19) >>> 0);
  // And one for --peer-tick.
  const peerRng = new Rng((seed * 15_485_863 + 29) >>> 0);
  const nodeCount = opts.redlock ? (redlockRng.chance(0.5) ? 3 : 5) : 0;
  const quorum = Math.floor(nodeCount / 2) + 1;
  const nodes = Array.from({ length: nodeCount }, () => new ModelRedis(() => world.now));
  const nodeSubscribers = new Set<SimNodeSubscriber>();
  const afterNode = (j: number) => {
    for (const [channel, message] of nodes[j]!.messages.splice(0))
      for (const s of nodeSubscribers) if (s.index === j) s.deliver(channel, message);
  };
  /** Owners that hold `key`: on the one Redis, or on a quorum of the Redlock nodes. */
  const heldBy = (key: string): string[] => {
    if (nodeCount === 0) return redis.owners(key);
    const votes = new Map<string, number>();
    for (const n of nodes) for (const o of n.owners(key)) votes.set(o, (votes.get(o) ?? 0) + 1);
    return [...votes].filter(([, v]) => v >= quorum).map(([o]) => o);
  };
  /**
   * Redis names the handle's owner, or, for a hold granted early (core/early.ts) whose release is still on its
   * way, the hold handing it over.
   */
  const holdsInRedis = (h: LockHandle): boolean => {
    const owners = heldBy(h.key);
    const handedBy = (h as { handedBy?: string }).handedBy;
    return owners.includes(h.owner) || (handedBy !== undefined && owners.includes(handedBy));
  };
  /** No owner anywhere (with Redlock: on no node, so nothing stands in a waiter's way). */
  const isFree = (key: string): boolean =>
    nodeCount === 0 ? redis.owners(key).length === 0 : nodes.every((n) => n.owners(key).length === 0);
  if (nodeCount > 0) world.log(`Redlock over ${nodeCount} nodes (quorum ${quorum})`);
  const procs: Proc[] = [];
  const nProcs = opts.processes ?? rng.int(2, 3);
  for (let i = 0; i < nProcs; i++) {
    const sim = new SimProcess(world, `p${i}`);
    let backend: LockBackend;
    let conn: { kill(): void };
    let subscriber: Proc["subscriber"];
    let ownersRead: Proc["ownersRead"];
    let conns: SimConnection[];
    if (nodeCount > 0) {
      const nodeConns = nodes.map((_, j) => new SimConnection(world, sim, faults, () => afterNode(j), true));
      conns = nodeConns;
      const mine = new Set<SimNodeSubscriber>();
      const all = {
        add: (s: SimNodeSubscriber) => {
          mine.add(s);
          nodeSubscribers.add(s);
          return all;
        },
      } as unknown as Set<SimNodeSubscriber>;
      const clients = nodeConns.map(
        (c, j) => new SimNodeClient(world, sim, faults, c, () => nodes[j]!, j, all),
      );
      backend = createRedlockBackend({
        clients: clients as unknown as Redis[],
        clock: sim.clock,
        random: () => rng.next(),
        quorum,
        driftFactor: 0.01,
        nodeTimeoutMs: faults.commandTimeoutMs,
        prefix: "lock:",
      });
      conn = { kill: () => redlockRng.pick(nodeConns).kill() };
      subscriber = () =>
        mine.size === 0
          ? undefined
          : {
              kill: () => redlockRng.pick([...mine]).kill(),
              get closed() {
                return [...mine].every((s) => s.closed);
              },
            };
    } else {
      const c = new SimConnection(world, sim, faults, afterRun);
      const b = createSimBackend({
        world,
        proc: sim,
        conn: c,
        redis: () => redis,
        faults,
        subscribers,
        queueLeaseMs: QUEUE_LEASE,
      });
      backend = b;
      conn = c;
      conns = [c];
      subscriber = b.subscriber;
      ownersRead = b.ownersRead;
    }
    const locks = createLocksWithBackend(
      backend,
      {
        leaseMs: lease,
        waitMs: 1_000,
        instanceId: `p${i}`,
        retry: { maxMs: RETRY_MAX, minMs: 5, jitterMs: 10, queueLeaseMs: QUEUE_LEASE },
        // Both bounds of the local streak, each way: strict order, by count, by how long others queued.
        localStreak: rng.pick([0, 1, 4]),
        localStreakMs: rng.pick([0, 20, 200]),
        handoffAdoption: rng.chance(0.25) ? "attempt" : "message",
      },
      { clock: sim.clock, random: () => rng.next() },
    );
    procs.push({
      sim,
      conn,
      locks,
      closed: false,
      pausedTotal: 0,
      handles: new Set(),
      subscriber,
      ownersRead,
      conns,
      waiting: new Set(),
    });
  }
  redis.hset(STOCK, "qty", String(INITIAL_STOCK));

  let violation: string | undefined;
  const fail = (msg: string) => {
    if (!violation) {
      violation = msg;
      world.log(`VIOLATION: ${msg}`);
      world.stopped = true;
    }
  };
  const sections = new Set<Section>();
  /** Handles whose key Redis lost under them (the expire fault): they may believe they hold it until they
   * look; only withLock's "protected throughout" check still applies to them. */
  const tainted = new Set<LockHandle>();
  /** key + owner → the newest token Redis had granted when the key was lost: those grants are tainted too. */
  const taintedGrants = new Map<string, number>();
  const isTaintedOwn = (h: LockHandle) =>
    tainted.has(h) || (h.token !== null && h.token <= (taintedGrants.get(`${h.key}\n${h.owner}`) ?? -1));
  // A hold granted early borrows the hold handing it over until its release runs: if that one's key was lost,
  // so is this one's protection (it learns so from the release's answer).
  const isTainted = (h: LockHandle) => isTaintedOwn(h) || handedByTainted(h, tainted, taintedGrants);
  const sectionScope = new AsyncLocalStorage<Section>();
  const pending = new Set<PendingAcquire>();
  const freeSince = new Map<string, number>();
  const strandedSince = new Map<string, number>();
  const orphanSince = new Map<string, number>();
  /**
   * Owners with a re-entry whose call failed (Redis's count may keep one more than the process knows of), or whose
   * release failed in a family of holds: the library leaves such a count to the lease rather than risk taking a
   * count another hold still has (README: a release is retried only while no other hold of the owner is held, and
   * only until its own hold's deadline, which a re-entry with a longer lease outlasts). Not judged by I11.
   */
  const leftToLease = new Set<string>();
  const reentryFailed = (owner: string | undefined) => {
    if (owner !== undefined) leftToLease.add(owner);
  };
  /** How long a waiter's leave may take to land once it gives up: its own call, behind one slow or timed-out one. */
  const leaveBound = faults.commandTimeoutMs + 3 * faults.slowMs + 50;
  const stats = {
    events: 0,
    acquired: 0,
    sold: 0,
    keysLost: 0,
    handoffs: 0,
    early: 0,
    earlyRefused: 0,
    byMessage: 0,
    handedToLeaver: 0,
  };
  const earlyHolds: LockHandle[] = [];
  let sold = 0;
  let badCount = 0;
  const unhandled = (reason: unknown) =>
    fail(`unhandled rejection: ${String((reason as Error)?.stack ?? reason)}`);
  process.on("unhandledRejection", unhandled);

  const ancestors = (s: Section | undefined): Section[] => {
    const out: Section[] = [];
    for (let c = s; c; c = c.parent) out.push(c);
    return out;
  };

  const check = () => {
    stats.events++;
    // I1, I2: one owner holds a resource at a time, and only while Redis says so (a hold granted early, see
    // core/early.ts: while Redis still names the hold that is handing it over, its release on its way).
    const byResource = new Map<string, Set<string>>();
    for (const p of procs) {
      for (const h of p.handles) {
        if (!h.isHeld() || isTainted(h)) continue;
        const owners = byResource.get(h.resource) ?? new Set();
        owners.add(h.owner);
        byResource.set(h.resource, owners);
        if (!holdsInRedis(h))
          fail(
            `${p.sim.name}: handle of ${h.owner} on ${h.resource} reports held, but Redis has ${JSON.stringify(heldBy(h.key))}`,
          );
      }
    }
    for (const [r, owners] of byResource)
      if (owners.size > 1) fail(`two holders of ${r}: ${[...owners].join(", ")}`);
    // I9: a fresh grant's token is above every token issued before for that resource (a restart included).
    if (redis.tokenWentBack) fail(`a token went back: ${redis.tokenWentBack}`);
    // I3: the guarded stock never goes below zero, nor sells more than it had.
    const qty = Number(redis.hgetall(STOCK).qty ?? "0");
    if (qty < 0) fail(`stock went below zero: ${qty}`);
    if (sold > INITIAL_STOCK) fail(`sold ${sold} of ${INITIAL_STOCK}`);
    // Critical sections of one resource overlap only when both began inside one still-running scope (a holder's
    // own concurrent children, the documented choice); detached work started after its scope ended never does.
    // A section whose lock was lost (and signalled) no longer counts as protected.
    const active = [...sections].filter((s) => s.active && s.handle.isHeld() && !isTainted(s.handle));
    for (let i = 0; i < active.length; i++) {
      for (let j = i + 1; j < active.length; j++) {
        const a = active[i]!;
        const b = active[j]!;
        if (a.resource !== b.resource) continue;
        if (!a.liveAtStart.some((x) => b.liveAtStart.includes(x)))
          fail(
            `two critical sections of ${a.resource} overlap, and neither began inside a scope the other began in (owners ${a.handle.owner} count ${a.handle.count} / ${b.handle.owner} count ${b.handle.count})`,
          );
      }
    }
    // I8: a free lock is not left unclaimed while a running process waits for it.
    for (const r of [...RESOURCES, STOCK_LOCK]) {
      const waiting = [...pending].some(
        (w) => w.resource === r && w.waitMs > 0 && !w.proc.closed && !(w.proc.sim.pausedUntil! > world.now),
      );
      const free = isFree(`lock:{${r}}`);
      if (waiting && free) {
        const since = freeSince.get(r) ?? world.now;
        freeSince.set(r, since);
        // A live queued waiter goes first (fairness): a paused or dead one holds the lock up for at most
        // the queue lease it was last refreshed with, a running one looks within a third of it.
        const queued = nodeCount === 0 && redis.liveEntries(`queue:${r}`, `queue-leases:${r}`).length > 0;
        if (world.now - since > wakeBound + (queued ? QUEUE_LEASE : 0))
          fail(`lock ${r} free for ${world.now - since} ms while a waiter waits (lost wake-up)`);
      } else freeSince.delete(r);
    }
    // I10: an entry in the store's queue belongs to a waiter that still waits (or whose leave is on its way).
    // An entry left behind holds a free lock back from everyone, and a release hands the lock to nobody, for a
    // queue lease. Not judged while its process is closed or paused, nor until the background retry of a leave
    // that died with a lost call or a kill has had its time (LOSS_GRACE, as I11).
    if (nodeCount === 0) {
      const seen = new Set<string>();
      for (const r of [...RESOURCES, STOCK_LOCK]) {
        for (const o of redis.liveEntries(`queue:${r}`, `queue-leases:${r}`)) {
          const p = procs[Number(/^p(\d+):/.exec(o)?.[1] ?? -1)];
          if (!p || p.closed || p.sim.pausedUntil! > world.now) continue;
          if (world.now - lastLossOf(p) < LOSS_GRACE) continue;
          const g = (p.locks as unknown as { gates: Map<string, unknown> }).gates.get(r);
          if (g instanceof Gate && g.queue.some((w) => w.req.owner === o)) continue;
          const id = `${r}\n${o}`;
          seen.add(id);
          const since = strandedSince.get(id) ?? world.now;
          strandedSince.set(id, since);
          if (world.now - since > leaveBound)
            fail(`${o}'s entry in the queue of ${r} outlived its waiter by ${world.now - since} ms`);
        }
      }
      for (const id of strandedSince.keys()) if (!seen.has(id)) strandedSince.delete(id);
    }
    // I11: a lock is not held by an owner nobody will release: every owner Redis names has a handle that holds
    // it (or one granted early from it), or a waiter that still waits under that name (it adopts or passes on
    // what it was handed). A waiter that gave up with a grant on its way, or a hold of a caller that is gone,
    // is the library's to release at once; until then everyone else waits out the lease. Judged only while
    // its process runs undisturbed: after a lost call or a kill the background release retries (its gap, then
    // its own round trip), after a slow delivery the give-back that waited for it goes out.
    {
      const seen = new Set<string>();
      for (const r of [...RESOURCES, STOCK_LOCK]) {
        for (const o of heldBy(`lock:{${r}}`)) {
          const p = procs[Number(/^p(\d+):/.exec(o)?.[1] ?? -1)];
          if (!p || p.closed || !undisturbed(p)) continue;
          if (claimed(p, r, o)) continue;
          const id = `${r}\n${o}`;
          seen.add(id);
          const since = orphanSince.get(id) ?? world.now;
          orphanSince.set(id, since);
          if (world.now - since > ORPHAN_BOUND)
            fail(
              `lock ${r} held by ${o} for ${world.now - since} ms, and nobody holds it or waits under that name (held by nobody)`,
            );
        }
      }
      for (const id of orphanSince.keys()) if (!seen.has(id)) orphanSince.delete(id);
    }
  };

  /** Its process ran without a lost call, kill, pause or slow delivery for long enough to have recovered. */
  const undisturbed = (p: Proc): boolean =>
    world.now - lastLossOf(p) > LOSS_GRACE &&
    world.now - Math.max(...p.conns.map((c) => c.lastSlowAt)) > SLOW_GRACE &&
    world.now - (p.sim.pausedUntil ?? Number.NEGATIVE_INFINITY) > SLOW_GRACE;
  const lastLossOf = (p: Proc): number => Math.max(...p.conns.map((c) => c.lastLossAt));

  /**
   * A handle of `o` on `r` that its caller has not released, one granted early from `o`'s hold, or a waiter that
   * still waits under that name.
   */
  const claimed = (p: Proc, r: string, o: string): boolean => {
    if (leftToLease.has(o)) return true;
    for (const h of p.handles) {
      if (h.resource !== r) continue;
      // A hold its caller has not released yet (lost or not: a withLock still in its body releases at its end).
      if (h.owner === o && !(h as { released?: boolean }).released) return true;
      if ((h as { handedBy?: string }).handedBy === o && h.isHeld()) return true;
    }
    const g = (p.locks as unknown as { gates: Map<string, unknown> }).gates.get(r);
    return g instanceof Gate && g.queue.some((w) => w.req.owner === o);
  };

  /** Tracks one acquire call for the settle bound and the lost-wake-up check; `settled` ends the wait early. */
  async function tracked<T>(
    p: Proc,
    resource: string,
    waitMs: number,
    fn: (settled: () => void) => Promise<T>,
  ): Promise<T> {
    const w: PendingAcquire = { proc: p, resource, start: world.now, waitMs, pausedAtStart: p.pausedTotal };
    pending.add(w);
    let done = false;
    const settled = () => {
      if (done) return;
      done = true;
      pending.delete(w);
      const took = world.now - w.start - (p.pausedTotal - w.pausedAtStart);
      const bound = settleBoundOf(faults, waitMs);
      if (took > bound)
        fail(`${p.sim.name}: acquire of ${resource} with waitMs ${waitMs} took ${took} ms (bound ${bound})`);
    };
    try {
      return await fn(settled);
    } finally {
      settled();
    }
  }

  const keep = (p: Proc, h: LockHandle) => {
    // A release that fails in a family of holds (an owner and its re-entries) is left to the lease (leftToLease).
    const release = h.release.bind(h);
    h.release = () => {
      const giveUp = opts.sameTick ? sameTickGiveUp(p, h.resource) : undefined;
      const before = giveUp !== undefined && tickRng.chance(0.5);
      if (before) giveUp();
      const peerGiveUp = opts.peerTick ? peerTickGiveUp(p, h.resource) : undefined;
      const peerBefore = peerGiveUp !== undefined && peerRng.chance(0.5);
      if (peerBefore) peerGiveUp();
      const out = release().catch((err: unknown) => {
        for (const x of p.handles) if (x !== h && x.owner === h.owner) reentryFailed(h.owner);
        throw err;
      });
      if (giveUp && !before) giveUp();
      if (peerGiveUp && !peerBefore) peerGiveUp();
      return out;
    };
    p.handles.add(h);
    stats.acquired++;
    if ((h as { handedBy?: string }).handedBy !== undefined) earlyHolds.push(h);
    if ((h as { byMessage?: boolean }).byMessage) stats.byMessage++;
  };

  /**
   * `--same-tick`: what gives up in the tick of a release of `resource` in `p`, if anything: one of its acquires of
   * that resource aborted, or (rarely) the process closed.
   */
  function sameTickGiveUp(p: Proc, resource: string): (() => void) | undefined {
    if (p.closed || !tickRng.chance(0.5)) return undefined;
    if (tickRng.chance(0.05))
      return () => {
        world.log(`${p.sim.name} close() in the tick of a release of ${resource}`);
        p.closed = true;
        void p.locks.close();
      };
    const mine = [...p.waiting].filter((x) => x.resource === resource);
    if (mine.length === 0) return undefined;
    const victim = tickRng.pick(mine);
    return () => {
      world.log(`${p.sim.name} an acquire of ${resource} aborted in the tick of its release`);
      victim.ac.abort(new Error("sim abort in the release's tick"));
    };
  }

  /** `--peer-tick`: an acquire of `resource` waiting in a process other than `p` to abort at `p`'s release, if any. */
  function peerTickGiveUp(p: Proc, resource: string): (() => void) | undefined {
    if (!peerRng.chance(0.5)) return undefined;
    const theirs = procs
      .filter((q) => q !== p && !q.closed)
      .flatMap((q) => [...q.waiting].filter((x) => x.resource === resource).map((x) => ({ q, x })));
    if (theirs.length === 0) return undefined;
    const { q, x } = peerRng.pick(theirs);
    return () => {
      world.log(`${q.sim.name}: an acquire of ${resource} aborted in the tick of ${p.sim.name}'s release`);
      x.ac.abort(new Error("sim abort in another process's release tick"));
    };
  }

  /** The enclosing sections of `resource` whose locks are held as the call is made (what re-entry may join). */
  const liveEnclosing = (resource: string): Section[] =>
    ancestors(sectionScope.getStore()).filter((x) => x.resource === resource && x.handle.isHeld());

  async function body(p: Proc, h: LockHandle, depth: number, liveAtCall: Section[]): Promise<void> {
    const parent = sectionScope.getStore();
    const enclosing = parent?.resource === h.resource ? parent : undefined;
    const s: Section = { resource: h.resource, parent: enclosing, active: true, liveAtStart: [], handle: h };
    s.liveAtStart = [s, ...liveAtCall];
    sections.add(s);
    try {
      await sectionScope.run(s, async () => {
        const roll = rng.next();
        if (depth === 0 && roll < 0.15) {
          // Detached work started inside the scope, run after it ends.
          p.sim.clock.setTimer(
            () => {
              void Promise.all([task(p, "withLock", h.resource, 1), task(p, "withLock", h.resource, 1)]);
            },
            rng.int(1, 80),
          );
        }
        if (depth === 0 && roll > 0.85) await task(p, "withLock", h.resource, depth + 1);
        await p.sim.sleep(rng.chance(0.1) ? rng.int(LEASE, 2 * LEASE) : rng.int(1, 120));
      });
    } finally {
      s.active = false;
      sections.delete(s);
    }
  }

  async function task(p: Proc, kind: string, resource: string, depth = 0): Promise<void> {
    if (p.closed) return;
    const waitMs = rng.int(0, 3) === 0 ? 0 : rng.int(100, 1_200);
    const leaseOpt = rng.chance(0.3) ? { leaseMs: rng.int(100, LEASE) } : {};
    /** The owner this call re-enters, while a re-entry of it may be what fails (see leftToLease). */
    let reentryOf: string | undefined;
    try {
      if (kind === "withLock") {
        let protectedThroughout = true;
        let hk: LockHandle | undefined;
        let inBody = false;
        const liveAtCall = liveEnclosing(resource);
        reentryOf = liveAtCall[0]?.handle.owner;
        const watch = setIntervalSim(() => {
          if (inBody && hk && !holdsInRedis(hk)) protectedThroughout = false;
        });
        try {
          await tracked(p, resource, waitMs, (settled) =>
            p.locks.withLock(
              resource,
              async (h) => {
                settled();
                hk = h;
                inBody = true;
                keep(p, h);
                await body(p, h, depth, liveAtCall);
                if (!holdsInRedis(h)) protectedThroughout = false;
                inBody = false;
                // Its release comes next: one that fails while a re-entry of its owner is held is left to the lease.
                if ([...p.handles].some((x) => x !== h && x.owner === h.owner)) reentryOf = h.owner;
              },
              { waitMs, ...leaseOpt },
            ),
          );
          // After close() the library neither renews nor releases (the lock is left to its lease, README), so
          // it cannot learn of a key lost meanwhile: only a withLock of a running process is held to this.
          if (!protectedThroughout && !p.closed)
            fail(
              `${p.sim.name}: withLock(${resource}) resolved normally, but its owner did not hold the key throughout`,
            );
        } finally {
          watch();
        }
      } else if (kind === "acquire") {
        const ac = new AbortController();
        if (rng.chance(0.3)) p.sim.clock.setTimer(() => ac.abort(new Error("sim abort")), rng.int(1, 400));
        const waiting = { resource, ac };
        p.waiting.add(waiting);
        const h = await tracked(p, resource, waitMs, () =>
          p.locks.acquire(resource, { waitMs, signal: ac.signal, ...leaseOpt }),
        ).finally(() => p.waiting.delete(waiting));
        if (p.closed) fail(`${p.sim.name}: acquire returned a handle after close()`);
        keep(p, h);
        if (opts.extra && p.ownersRead && readRng.chance(0.5)) await readUnder(p, p.ownersRead, h);
        // With Redlock, explicit-owner re-entry only under --extra: its per-node counts can drift apart (README).
        if (rng.chance(0.3) && !(nodeCount > 0 && !opts.extra)) {
          reentryOf = h.owner;
          const again = await p.locks.acquire(resource, { owner: h.owner, waitMs: 0 });
          keep(p, again);
          await p.sim.sleep(rng.int(1, 60));
          if (opts.extra && orderRng.chance(0.5)) {
            // The outer hold goes first, the re-entry stays held a while (a release retried after a lost reply
            // must not free the lock under it).
            await h.release().catch(() => {});
            await p.sim.sleep(orderRng.int(20, 400));
          }
          await again.release().catch(() => reentryFailed(h.owner));
          reentryOf = undefined;
        }
        await p.sim.sleep(rng.int(1, 150));
        await h.release().catch(() => {});
      } else if (kind === "try") {
        const h = await p.locks.tryAcquire(resource, leaseOpt);
        if (h) {
          keep(p, h);
          await p.sim.sleep(rng.int(1, 100));
          await h.release().catch(() => {});
        }
      } else if (kind === "stock") {
        const reads = (r: unknown) => (r as SimRedis).fencedRead(STOCK, ["qty"]);
        const h = await tracked(p, STOCK_LOCK, waitMs, () =>
          p.locks.acquire(STOCK_LOCK, { waitMs, reads: reads as never, ...leaseOpt }),
        );
        keep(p, h);
        const [state, qty] = (await (h as unknown as { reads: Promise<[number, string | null]> }).reads) ?? [
          0,
          "0",
        ];
        if (state !== 1 || Number(qty) <= 0) {
          await h.release().catch(() => {});
          return;
        }
        await p.sim.sleep(rng.chance(0.15) ? rng.int(LEASE, 2 * LEASE) : rng.int(1, 60));
        const out = await h.releaseAfter((r) => (r as unknown as SimRedis).fencedWrite(STOCK, h.token!, -1));
        if (out.write.status === "fulfilled" && out.write.value[0] === 1) sold++;
      } else if (kind === "bad-reads") {
        const bad = `bad-${p.sim.name}-${++badCount}`;
        let paused = p.pausedTotal;
        await p.locks
          .acquire(bad, {
            waitMs,
            reads: (() => {
              throw new Error("reads bug");
            }) as never,
          })
          .then(
            () => fail(`${p.sim.name}: acquire with a throwing reads resolved`),
            () => {},
          );
        const settleMs = faults.commandTimeoutMs + 2 * faults.slowMs + 10;
        await p.sim.sleep(settleMs);
        // A process paused meanwhile could not retry a release lost on its way: the same time after it resumes.
        while (p.pausedTotal !== paused) {
          paused = p.pausedTotal;
          await p.sim.sleep(settleMs);
        }
        const owners = redis.owners(`lock:{${bad}}`);
        if (owners.length > 0 && !p.closed && faults.loseReply === 0)
          fail(`${p.sim.name}: a throwing reads left the lock held by ${owners[0]}`);
      }
    } catch (err) {
      reentryFailed(reentryOf);
      if (p.closed && !(err instanceof LocksClosedError) && (err as Error)?.name === "LockTimeoutError")
        fail(
          `${p.sim.name}: an acquire after close() failed with ${(err as Error).name}, not LocksClosedError`,
        );
    }
  }

  /**
   * A read right after acquire, sent as fencedRead sends its own (the API reads its stock so): Redis must name
   * the hold's owner when it runs, unless the hold was lost before its answer came, or its key (or the key of
   * the hold that granted it early) vanished. An early grant's release put off past such a read found the old
   * owner (fixed in fencedRead, 2026-12-04).
   */
  async function readUnder(p: Proc, read: NonNullable<Proc["ownersRead"]>, h: LockHandle): Promise<void> {
    if (!h.isHeld()) return;
    const owners = await read(h.key, h.owner).catch(() => undefined);
    if (owners && !owners.includes(h.owner) && h.isHeld() && !isTainted(h) && !p.closed)
      fail(
        `${p.sim.name}: a read under ${h.owner}'s hold of ${h.resource} found Redis naming ${JSON.stringify(owners)}`,
      );
  }

  /** A repeating check on the process's clock; returns its stop function. */
  function setIntervalSim(fn: () => void): () => void {
    let stopped = false;
    const tick = () => {
      if (stopped) return;
      fn();
      world.after(7, tick);
    };
    world.after(7, tick);
    return () => {
      stopped = true;
    };
  }

  // Redlock hands out no token and takes no `reads`: the stock workloads are the single-Redis store's.
  const kinds =
    nodeCount > 0
      ? ["withLock", "withLock", "acquire", "try"]
      : ["withLock", "withLock", "acquire", "try", "stock", "stock", "bad-reads"];
  let unfinished = 0;
  const nTasks = opts.tasks ?? 24;
  for (let i = 0; i < nTasks; i++) {
    const p = rng.pick(procs);
    const kind = rng.pick(kinds);
    const resource = rng.pick(RESOURCES);
    const at = rng.int(0, 2_000);
    unfinished++;
    world.at(
      at,
      () => {
        void task(p, kind, resource).finally(() => unfinished--);
      },
      p.sim,
    );
  }
  // Faults: kills, subscriber kills, pauses, and sometimes a close() at any moment.
  const nFaults = stormy ? rng.int(3, 10) : rng.int(0, 2);
  for (let i = 0; i < nFaults; i++) {
    const p = rng.pick(procs);
    const what = rng.pick(["kill", "kill-sub", "pause", "pause"]);
    world.at(rng.int(0, 2_500), () => {
      if (what === "kill") {
        world.log(`${p.sim.name} connection killed`);
        p.conn.kill();
      } else if (what === "kill-sub") p.subscriber()?.kill();
      else {
        const ms = rng.int(50, 2 * LEASE);
        p.sim.pause(ms);
        p.pausedTotal += ms;
      }
    });
  }
  // A lock key lost early (evicted, deleted by hand, a failover that lost the write). Opt-in (SIM_KEY_LOSS=1):
  // the library cannot stay safe when Redis loses a lock, and it does not always notice (see README). Drawn
  // from a stream of its own, so a seed without this fault runs exactly as it does with the fault off.
  const lossRng = new Rng((seed * 7919 + 17) >>> 0);
  if (opts.keyLoss && !opts.redlock && lossRng.chance(0.3)) {
    const r = lossRng.pick([...RESOURCES, STOCK_LOCK]);
    const lose = () => {
      const key = `lock:{${r}}`;
      // Waits for a moment the lock is held (looking every 20 ms), until the workload is over.
      if (redis.owners(key).length === 0) {
        if (world.now < 3_000) world.after(20, lose);
        return;
      }
      world.log(`lock key of ${r} lost (held by ${redis.owners(key).join(", ")})`);
      stats.keysLost++;
      for (const p of procs) for (const h of p.handles) if (h.key === key) tainted.add(h);
      // Grants whose reply is still on its way are not handles yet: they are known by owner and token.
      const token = Number(redis.getString(`fence:${r}`) ?? "0");
      for (const o of redis.owners(key)) taintedGrants.set(`${key}\n${o}`, token);
      redis.del(key);
    };
    world.at(lossRng.int(0, 2_500), lose);
  }
  // Redis restarted empty (no persistence, or a replica promoted before it had anything): every lock and
  // fence counter is gone, every connection and subscriber dropped. The guarded stock survives, as a store
  // of record would (here it shares the model). Tokens must still never go back (I9).
  const restartRng = new Rng((seed * 31_337 + 3) >>> 0);
  if (opts.keyLoss && !opts.redlock && restartRng.chance(0.2)) {
    world.at(restartRng.int(100, 2_500), () => {
      world.log("Redis restarted empty");
      stats.keysLost++;
      for (const p of procs) for (const h of p.handles) tainted.add(h);
      // Every grant's token is read before anything is deleted: a fence counter deleted first read as 0, and
      // a grant whose reply was still on its way (not a handle yet) went untainted (seed 9153508, --key-loss).
      const keys = redis.keys().filter((key) => key !== STOCK);
      for (const key of keys) {
        if (!key.startsWith("lock:{")) continue;
        const r = key.slice("lock:{".length, -1);
        const token = Number(redis.getString(`fence:${r}`) ?? "0");
        for (const o of redis.owners(key)) taintedGrants.set(`${key}\n${o}`, token);
      }
      for (const key of keys) redis.del(key);
      for (const p of procs) {
        if (p.closed) continue;
        world.log(`${p.sim.name} connection killed (restart)`);
        p.conn.kill();
        p.subscriber()?.kill();
      }
    });
  }
  if (rng.chance(0.25)) {
    const p = rng.pick(procs);
    world.at(rng.int(0, 2_500), () => {
      world.log(`${p.sim.name} close()`);
      p.closed = true;
      void p.locks.close();
    });
  }

  const horizon = opts.horizonMs ?? 30_000;
  try {
    await world.run(horizon, () => {
      if (!violation) check();
    });
    if (!violation) {
      if (unfinished > 0) fail(`${unfinished} task(s) still pending after ${horizon} virtual ms (a hang)`);
      for (const p of procs) {
        if (!p.closed) continue;
        if (p.sim.timers.size > 0) fail(`${p.sim.name}: ${p.sim.timers.size} timer(s) left after close()`);
        const sub = p.subscriber();
        if (sub && !sub.closed) fail(`${p.sim.name}: subscriber left open after close()`);
      }
    }
  } finally {
    process.off("unhandledRejection", unhandled);
    for (const p of procs) if (!p.closed) await p.locks.close();
    // Node 20's AsyncLocalStorage visits every enabled instance on every promise created, and an instance stays
    // enabled until disable(): without this, each seed's stores (ours and each Locks' scope, which close()
    // leaves enabled) would slow every later seed down, 500 seeds taking minutes instead of seconds.
    sectionScope.disable();
    for (const p of procs)
      (p.locks as unknown as { scope?: { als?: AsyncLocalStorage<unknown> } }).scope?.als?.disable();
  }
  stats.sold = sold;
  stats.handoffs = redis.handoffs.queued + redis.handoffs.next;
  stats.handedToLeaver = redis.handoffs.toLeaver;
  stats.early = earlyHolds.length;
  stats.earlyRefused = earlyHolds.filter(
    (h) => (h as { lostError?: { reason: string } }).lostError?.reason === "handoff-refused",
  ).length;
  redis = new ModelRedis(() => world.now);
  return { seed, ok: !violation, violation, trace: world.trace, stats };
}
