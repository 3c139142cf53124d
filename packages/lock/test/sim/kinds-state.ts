import { READ_WRITE_PREFIX, SEMAPHORE_PREFIX } from "../../src/redis/redis-locks.js";
import { fenceKey, lockKey } from "../../src/resource.js";
import type { LockHandle, RedisLocks } from "../../src/types.js";
import type { Faults, SimConnection } from "./backend.js";
import type { ModelRedis } from "./model.js";
import type { Rng } from "./rng.js";
import { SharedModel } from "./shared-model.js";
import { handedByTainted } from "./taint.js";
import type { SimProcess, World } from "./world.js";

/** How a handle holds its lock: a semaphore permit, a read or a write hold, or the mutex. */
export type Kind = "permit" | "read" | "write" | "mutex";

export const PREFIX = "lock:";
const PREFIXES: Record<Kind, string> = {
  permit: `${PREFIX}${SEMAPHORE_PREFIX}`,
  read: `${PREFIX}${READ_WRITE_PREFIX}`,
  write: `${PREFIX}${READ_WRITE_PREFIX}`,
  mutex: PREFIX,
};
export const keyOf = (kind: Kind, resource: string) => lockKey(PREFIXES[kind], resource);
/** The fence counter: the shared store's own name (src/redis/key-names.ts), the simulated mutex store's. */
export const fenceOf = (kind: Kind, resource: string) =>
  kind === "mutex" ? `fence:${resource}` : fenceKey(resource, PREFIXES[kind]);

export interface KProc {
  sim: SimProcess;
  conn: SimConnection;
  locks: RedisLocks;
  closed: boolean;
  /** Killed for good (SIGKILL): nothing of it runs again, its holds run out in Redis. */
  crashed: boolean;
  pausedTotal: number;
  /** Its subscribers made so far (the mutex's and each shared core's). */
  subscribers(): { kill(): void; readonly closed: boolean }[];
}

export interface Held {
  proc: KProc;
  h: LockHandle;
  kind: Kind;
}

/** An acquire call in progress, for its settle bound and the lost wake-up check. */
export interface Waiting {
  proc: KProc;
  kind: Kind;
  resource: string;
  /** The owner it attempts as, when known (a re-entry); a fresh owner holds nothing yet. */
  owner: string | undefined;
  start: number;
  waitMs: number;
  pausedAtStart: number;
  /** Since when its lock would have been granted to it, and what made it so if known (see kinds-check.ts). */
  grantableSince?: number;
  cause?: string;
}

/** A multi-resource acquire in progress: what it took so far (by owner) and what it waits for. */
export interface MultiWait {
  proc: KProc;
  resources: string[];
  waitMs: number;
  /** The owners its grants were made to (from its acquired events). */
  owners: Set<string>;
  /** The lock its last refused attempt was for, until granted. */
  waitingOn: string | undefined;
  /** Told when its wait timed out (the timeout event), and how long it had waited then. */
  timedOut?: () => void;
  timedOutAfter?: number;
  grantableSince?: number;
}

/** What the workloads, the faults and the invariants of a kinds run share. */
export class KindsState {
  readonly shared: SharedModel;
  readonly procs: KProc[] = [];
  readonly holds = new Set<Held>();
  readonly pending = new Set<Waiting>();
  readonly multis = new Set<MultiWait>();
  /** Handles whose key Redis lost under them (key-loss fault): they may believe they hold it until they look. */
  readonly tainted = new Set<LockHandle>();
  /** key + owner → the newest token Redis had granted it when the key was lost: those grants are tainted too. */
  readonly taintedGrants = new Map<string, number>();
  readonly stats = { events: 0, acquired: 0, contended: 0, multi: 0, upgrades: 0, keysLost: 0 };
  violation: string | undefined;
  /** When the invariants were last checked (the event before this one). */
  lastCheckAt = 0;

  constructor(
    readonly world: World,
    readonly redis: () => ModelRedis,
    readonly faults: Faults,
    /** Permits of each semaphore resource: every caller agrees on them. */
    readonly permits: ReadonlyMap<string, number>,
    /** See weather.ts wakeBoundOf. */
    readonly wakeBound: number,
  ) {
    this.shared = new SharedModel(redis);
  }

  fail(msg: string): void {
    if (this.violation) return;
    this.violation = msg;
    this.world.log(`VIOLATION: ${msg}`);
    this.world.stopped = true;
  }

  /** Neither closed, crashed nor paused right now: its timers and replies run. */
  running(p: KProc): boolean {
    return !p.closed && !p.crashed && !(p.sim.pausedUntil! > this.world.now);
  }

  isTainted(h: LockHandle): boolean {
    if (this.tainted.has(h) || handedByTainted(h, this.tainted, this.taintedGrants)) return true;
    const lost = this.taintedGrants.get(`${h.key}\n${h.owner}`);
    return lost !== undefined && h.token !== null && h.token <= lost;
  }

  /** The handles that count as holding: they believe they hold, their lease has not ended, Redis kept the key. */
  *valid(): Generator<Held> {
    for (const x of this.holds) {
      // Released or lost is for good (a passed deadline alone is not: a renewal's answer may still come).
      if ((x.h as { state?: string }).state !== "held") this.holds.delete(x);
      else if (x.h.isHeld() && !this.isTainted(x.h)) yield x;
    }
  }

  /** Handles their callers have not released yet (lost or not): each one's owner is theirs to release (I11). */
  readonly kept = new Set<Held>();
  /**
   * Owners with a re-entry whose call failed, or a release that failed in a family of holds: the library leaves
   * such a count to the lease (run.ts, leftToLease). Not judged by I11.
   */
  readonly leftToLease = new Set<string>();
  /** key + owner → since when I11 found that owner in Redis with nobody in its process to release it. */
  readonly orphanSince = new Map<string, number>();
  /** Acquires still waiting that carry an abort signal: what `--same-tick` may abort in a release's tick. */
  readonly abortable = new Set<{ proc: KProc; key: string; ac: AbortController }>();
  /** `--same-tick` (run.ts): set by the run, with a random stream of its own. */
  sameTick: Rng | undefined;
  /** How many handles each owner was given: more than one is a family (a hold and its re-entries). */
  readonly handlesOf = new Map<string, number>();
  inFamily(owner: string): boolean {
    return (this.handlesOf.get(owner) ?? 0) > 1;
  }

  *unreleased(): Generator<Held> {
    for (const x of this.kept) {
      if ((x.h as { released?: boolean }).released) this.kept.delete(x);
      else yield x;
    }
  }

  keep(proc: KProc, h: LockHandle, kind: Kind): void {
    this.holds.add({ proc, h, kind });
    const held = { proc, h, kind };
    this.kept.add(held);
    this.handlesOf.set(h.owner, (this.handlesOf.get(h.owner) ?? 0) + 1);
    const release = h.release.bind(h);
    h.release = () => {
      const giveUp = this.sameTickGiveUp(proc, h.key);
      const before = giveUp !== undefined && this.sameTick!.chance(0.5);
      if (before) giveUp();
      const out = release().catch((err: unknown) => {
        if (this.inFamily(h.owner)) this.leftToLease.add(h.owner);
        throw err;
      });
      if (giveUp && !before) giveUp();
      return out;
    };
    this.stats.acquired++;
    if ((h as { handedBy?: string }).handedBy !== undefined) this.earlyHolds.push(h);
    if ((h as { byMessage?: boolean }).byMessage) this.byMessage++;
  }

  /**
   * `--same-tick`: what gives up in the tick of a release of `key` in `proc`: one of its acquires of that lock
   * aborted (a semaphore's release may have just granted it the freed permit), or (rarely) the process closed.
   */
  private sameTickGiveUp(proc: KProc, key: string): (() => void) | undefined {
    const rng = this.sameTick;
    if (!rng || proc.closed || proc.crashed || !rng.chance(0.5)) return undefined;
    if (rng.chance(0.05))
      return () => {
        this.world.log(`${proc.sim.name} close() in the tick of a release of ${key}`);
        proc.closed = true;
        void proc.locks.close();
      };
    const mine = [...this.abortable].filter((x) => x.proc === proc && x.key === key && !x.ac.signal.aborted);
    if (mine.length === 0) return undefined;
    const victim = rng.pick(mine);
    return () => {
      this.world.log(`${proc.sim.name} an acquire of ${key} aborted in the tick of its release`);
      victim.ac.abort(new Error("sim abort in the release's tick"));
    };
  }

  /** Mutex holds taken from another process's handoff message (core/by-message.ts), for the run's stats. */
  byMessage = 0;

  /** Mutex holds granted early (core/early.ts), for the run's stats. */
  readonly earlyHolds: LockHandle[] = [];
}
