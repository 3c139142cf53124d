import { LocksClosedError } from "../../src/errors.js";
import type { AcquireOptions, LockHandle, MultiLockHandle } from "../../src/types.js";
import { inRedis } from "./kinds-check.js";
import { type Kind, type KindsState, type KProc, keyOf, type Waiting } from "./kinds-state.js";
import type { Rng } from "./rng.js";
import { settleBoundOf } from "./weather.js";

export const LEASE = 300;

export type Body = (h: LockHandle) => Promise<void>;

/**
 * What every workload of a kinds run uses: acquire calls tracked for their settle bound and the lost wake-up
 * check, withLock checked for holding throughout, the handles kept for the invariants, and the random
 * choices (waits, fixed leases, aborts, hold times) as run.ts draws them.
 */
export class Tracker {
  /**
   * Errors a library call ended with while its process was still open. A withLock nested in another one's
   * body fails first, and its error reaches the task only when the outer call settles, maybe after close().
   */
  private readonly failedWhileOpen = new WeakSet<object>();

  constructor(
    readonly s: KindsState,
    readonly rng: Rng,
  ) {}

  /** withLock, checked: the body's lock is held in Redis throughout, or withLock does not resolve normally. */
  async withLock(
    p: KProc,
    kind: Kind,
    resource: string,
    owner: string | undefined,
    call: (fn: Body, o: AcquireOptions) => Promise<void>,
    body: Body,
  ): Promise<void> {
    const waitMs = this.waitMs();
    let held: LockHandle | undefined;
    let throughout = true;
    /** Its owner, once the body ran beside another hold of it: a failing release then leaves a count (I11). */
    let family: string | undefined;
    const stop = this.watch(() => {
      if (held && !inRedis(this.s, kind, held)) throughout = false;
    });
    try {
      await this.tracked(p, kind, resource, owner, waitMs, (settled) =>
        call(
          async (h) => {
            settled();
            this.s.keep(p, h, kind);
            held = h;
            await body(h);
            if (!inRedis(this.s, kind, h)) throughout = false;
            held = undefined;
            if (this.s.inFamily(h.owner)) family = h.owner;
          },
          { waitMs, ...this.leaseOpt() },
        ),
      );
      if (!throughout && !p.closed)
        this.s.fail(
          `${p.sim.name}: ${kind} withLock(${resource}) resolved normally, but its owner did not hold it throughout`,
        );
    } catch (err) {
      if (family !== undefined) this.s.leftToLease.add(family);
      throw err;
    } finally {
      stop();
    }
  }

  /** Tracks one acquire call for its settle bound and the lost wake-up check; `settled` ends the wait early. */
  async tracked<T>(
    p: KProc,
    kind: Kind,
    resource: string,
    owner: string | undefined,
    waitMs: number,
    fn: (settled: () => void) => Promise<T>,
  ): Promise<T> {
    const w: Waiting = {
      proc: p,
      kind,
      resource,
      owner,
      start: this.s.world.now,
      waitMs,
      pausedAtStart: p.pausedTotal,
    };
    this.s.pending.add(w);
    // Without an owner it may still re-enter a hold of this process through the withLock scope (detached work,
    // a concurrent child): its failure may leave a count too. A fresh acquire's failure only costs I11 a look.
    const key = keyOf(kind, resource);
    const mayReenter =
      owner !== undefined
        ? [owner]
        : [...this.s.unreleased()].filter((x) => x.proc === p && x.h.key === key).map((x) => x.h.owner);
    const settled = () => {
      // A crashed process's calls end only when the run cleans up (close()).
      if (!this.s.pending.delete(w) || p.crashed) return;
      const took = this.s.world.now - w.start - (p.pausedTotal - w.pausedAtStart);
      const bound = settleBoundOf(this.s.faults, waitMs);
      if (took > bound)
        this.s.fail(
          `${p.sim.name}: ${kind} acquire of ${resource} with waitMs ${waitMs} took ${took} ms (bound ${bound})`,
        );
    };
    try {
      return await fn(settled);
    } catch (err) {
      if (!p.closed && typeof err === "object" && err !== null) this.failedWhileOpen.add(err);
      // A re-entry that failed may still count in Redis (I11 leaves it to the lease).
      for (const o of mayReenter) this.s.leftToLease.add(o);
      throw err;
    } finally {
      settled();
    }
  }

  /** A handle (or several) the library returned: never after close(). */
  returned(p: KProc, h: LockHandle | MultiLockHandle, kind: Kind): void {
    if (p.closed) this.s.fail(`${p.sim.name}: acquire returned a handle after close()`);
    for (const x of "handles" in h ? h.handles : [h]) this.s.keep(p, x, kind);
  }

  /** Two holds of one owner, released in either order (the outer first: the re-entry must stay held). */
  async releaseBoth(p: KProc, outer: LockHandle, inner: LockHandle): Promise<void> {
    await p.sim.sleep(this.rng.int(1, 60));
    if (this.rng.chance(0.5)) {
      await outer.release().catch(() => {});
      await p.sim.sleep(this.rng.int(20, 200));
    }
    await inner.release().catch(() => {});
  }

  /** An acquire that failed after close() (not before it, its error seen later) ends with LocksClosedError. */
  closedCheck(p: KProc, err: unknown): void {
    if (typeof err === "object" && err !== null && this.failedWhileOpen.has(err)) return;
    if (p.closed && !(err instanceof LocksClosedError) && (err as Error)?.name === "LockTimeoutError")
      this.s.fail(
        `${p.sim.name}: an acquire after close() failed with LockTimeoutError, not LocksClosedError`,
      );
  }

  /** Work started inside a scope that runs after it ended: it must acquire afresh, not re-enter. */
  detached(p: KProc, fn: () => Promise<void>): void {
    p.sim.clock.setTimer(
      () => {
        void fn().catch((err) => this.closedCheck(p, err));
      },
      this.rng.int(1, 80),
    );
  }

  hold(p: KProc): Promise<void> {
    return p.sim.sleep(this.rng.chance(0.1) ? this.rng.int(LEASE, 2 * LEASE) : this.rng.int(1, 120));
  }

  waitMs(): number {
    return this.rng.int(0, 3) === 0 ? 0 : this.rng.int(100, 1_200);
  }

  leaseOpt(): { leaseMs?: number } {
    return this.rng.chance(0.3) ? { leaseMs: this.rng.int(100, LEASE) } : {};
  }

  /** An abort signal for an acquire of `kind` on `resource`; `done()` once that acquire settled. */
  abortSignal(p: KProc, kind: Kind, resource: string): { signal: AbortSignal; done(): void } {
    const ac = new AbortController();
    if (this.rng.chance(0.3))
      p.sim.clock.setTimer(() => ac.abort(new Error("sim abort")), this.rng.int(1, 400));
    const entry = { proc: p, key: keyOf(kind, resource), ac };
    this.s.abortable.add(entry);
    return { signal: ac.signal, done: () => this.s.abortable.delete(entry) };
  }

  /** A check every 7 virtual ms (on the world's clock: it runs while the process is paused); returns its stop. */
  watch(fn: () => void): () => void {
    let stopped = false;
    const tick = () => {
      if (stopped) return;
      fn();
      this.s.world.after(7, tick);
    };
    this.s.world.after(7, tick);
    return () => {
      stopped = true;
    };
  }
}
