import type { LockHandle, ReadWriteLock } from "../../src/types.js";
import { MUTEXES, MultiTasks } from "./kinds-multi.js";
import type { Kind, KindsState, KProc } from "./kinds-state.js";
import { Tracker } from "./kinds-track.js";
import type { Rng } from "./rng.js";

export const SEMAPHORES = ["s1", "s2"];
export const READ_WRITES = ["w1", "w2"];

export const TASKS = [
  "sem-with",
  "sem-with",
  "sem-acquire",
  "sem-try",
  "sem-burst",
  "read-with",
  "read-with",
  "write-with",
  "rw-acquire",
  "rw-try",
  "read-burst",
  "multi",
  "multi-with",
  "multi-try",
  "mutex-one",
] as const;
export type Task = (typeof TASKS)[number];

/**
 * The workloads of a kinds run: semaphores (withLock with nested re-entry and detached work, bursts of one
 * process's callers, acquire with aborts, fixed leases and explicit-owner re-entry, tryAcquire), read-write
 * locks (the same, plus a reader's upgrade and a writer re-entering as reader, inside withLock and by owner),
 * and the mutex workloads of kinds-multi.ts.
 */
export class KindsTasks {
  private readonly t: Tracker;
  readonly multi: MultiTasks;

  constructor(s: KindsState, rng: Rng) {
    this.t = new Tracker(s, rng);
    this.multi = new MultiTasks(this.t);
  }

  async run(p: KProc, task: Task): Promise<void> {
    if (p.closed || p.crashed) return;
    const { rng } = this.t;
    try {
      if (task === "sem-with") await this.semWith(p, rng.pick(SEMAPHORES), 0, undefined);
      else if (task === "sem-acquire") await this.semAcquire(p, rng.pick(SEMAPHORES));
      else if (task === "sem-try") await this.semTry(p, rng.pick(SEMAPHORES));
      else if (task === "sem-burst")
        await this.burst(p, rng.pick(SEMAPHORES), (r) => this.semWith(p, r, 1, undefined));
      else if (task === "read-burst")
        await this.burst(p, rng.pick(READ_WRITES), (r) => this.readWith(p, r, 1, undefined));
      else if (task === "read-with") await this.readWith(p, rng.pick(READ_WRITES), 0, undefined);
      else if (task === "write-with") await this.writeWith(p, rng.pick(READ_WRITES), 0, undefined);
      else if (task === "rw-acquire") await this.rwAcquire(p, rng.pick(READ_WRITES));
      else if (task === "rw-try") await this.rwTry(p, rng.pick(READ_WRITES));
      else if (task === "multi") await this.multi.multi(p);
      else if (task === "multi-with") await this.multi.multiWith(p);
      else if (task === "multi-try") await this.multi.multiTry(p);
      else await this.multi.mutexOne(p, rng.pick(MUTEXES));
    } catch (err) {
      this.t.closedCheck(p, err);
    }
  }

  // ---- semaphores ----

  /**
   * Several callers of one process at once: they queue locally behind the first, and a grant lets the next
   * one try at once (the core's one change for shared locks) instead of waiting for a release.
   */
  private async burst(p: KProc, r: string, one: (r: string) => Promise<void>): Promise<void> {
    const calls = Array.from({ length: this.t.rng.int(2, 4) }, () =>
      one(r).catch((err) => this.t.closedCheck(p, err)),
    );
    await Promise.all(calls);
  }

  private async semWith(p: KProc, r: string, depth: number, owner: string | undefined): Promise<void> {
    const sem = p.locks.semaphore(r, this.t.s.permits.get(r)!);
    await this.t.withLock(
      p,
      "permit",
      r,
      owner,
      (fn, o) => sem.withLock(fn, o),
      async (h) => {
        const roll = this.t.rng.next();
        if (depth === 0 && roll < 0.15) this.t.detached(p, () => this.semWith(p, r, 1, undefined));
        else if (depth === 0 && roll > 0.85) await this.semWith(p, r, depth + 1, h.owner);
        await this.t.hold(p);
      },
    );
  }

  private async semAcquire(p: KProc, r: string): Promise<void> {
    const sem = p.locks.semaphore(r, this.t.s.permits.get(r)!);
    const waitMs = this.t.waitMs();
    const { signal, done } = this.t.abortSignal(p, "permit", r);
    const h = await this.t
      .tracked(p, "permit", r, undefined, waitMs, () => sem.acquire({ waitMs, signal, ...this.t.leaseOpt() }))
      .finally(done);
    this.t.returned(p, h, "permit");
    if (this.t.rng.chance(0.3)) {
      const again = await this.t.tracked(p, "permit", r, h.owner, 0, () =>
        sem.acquire({ owner: h.owner, waitMs: 0 }),
      );
      this.t.s.keep(p, again, "permit");
      await this.t.releaseBoth(p, h, again);
    }
    await p.sim.sleep(this.t.rng.int(1, 150));
    await h.release().catch(() => {});
  }

  private async semTry(p: KProc, r: string): Promise<void> {
    const sem = p.locks.semaphore(r, this.t.s.permits.get(r)!);
    const h = await this.t.tracked(p, "permit", r, undefined, 0, () => sem.tryAcquire(this.t.leaseOpt()));
    if (!h) return;
    this.t.s.keep(p, h, "permit");
    await p.sim.sleep(this.t.rng.int(1, 100));
    await h.release().catch(() => {});
  }

  // ---- read-write locks ----

  private async readWith(p: KProc, r: string, depth: number, owner: string | undefined): Promise<void> {
    const rw = p.locks.readWrite(r);
    await this.t.withLock(
      p,
      "read",
      r,
      owner,
      (fn, o) => rw.read.withLock(fn, o),
      async (h) => {
        const roll = this.t.rng.next();
        // Inside the reader's scope the write side re-enters as the reader's owner: an upgrade.
        if (roll < 0.2) await this.upgrade(p, r, h.owner, (waitMs) => rw.write.acquire({ waitMs }));
        else if (depth === 0 && roll < 0.35) await this.readWith(p, r, depth + 1, h.owner);
        else if (depth === 0 && roll < 0.45) this.t.detached(p, () => this.readWith(p, r, 1, undefined));
        await this.t.hold(p);
      },
    );
  }

  private async writeWith(p: KProc, r: string, depth: number, owner: string | undefined): Promise<void> {
    const rw = p.locks.readWrite(r);
    await this.t.withLock(
      p,
      "write",
      r,
      owner,
      (fn, o) => rw.write.withLock(fn, o),
      async (h) => {
        const roll = this.t.rng.next();
        // Inside the writer's scope the read side re-enters as the writer's owner.
        if (depth < 2 && roll < 0.3) await this.readWith(p, r, depth + 1, h.owner);
        else if (depth === 0 && roll < 0.45) await this.writeWith(p, r, depth + 1, h.owner);
        else if (depth === 0 && roll < 0.55) this.t.detached(p, () => this.writeWith(p, r, 1, undefined));
        await this.t.hold(p);
      },
    );
  }

  /** A reader asks for the write lock as its own owner: granted only while it is the sole holder. */
  private async upgrade(
    p: KProc,
    r: string,
    owner: string,
    acquire: (waitMs: number) => Promise<LockHandle>,
  ): Promise<void> {
    const waitMs = this.t.rng.chance(0.3) ? 0 : this.t.rng.int(50, 400);
    let up: LockHandle;
    try {
      up = await this.t.tracked(p, "write", r, owner, waitMs, () => acquire(waitMs));
    } catch (err) {
      this.t.closedCheck(p, err);
      return;
    }
    this.t.s.keep(p, up, "write");
    this.t.s.stats.upgrades++;
    await p.sim.sleep(this.t.rng.int(1, 80));
    await up.release().catch(() => {});
  }

  private async rwAcquire(p: KProc, r: string): Promise<void> {
    const rw = p.locks.readWrite(r);
    const kind = this.t.rng.chance(0.4) ? "write" : "read";
    const waitMs = this.t.waitMs();
    const { signal, done } = this.t.abortSignal(p, kind, r);
    const h = await this.t
      .tracked(p, kind, r, undefined, waitMs, () =>
        rw[kind].acquire({ waitMs, signal, ...this.t.leaseOpt() }),
      )
      .finally(done);
    this.t.returned(p, h, kind);
    if (this.t.rng.chance(0.3)) await this.reenterByOwner(p, rw, h, kind);
    await p.sim.sleep(this.t.rng.int(1, 150));
    await h.release().catch(() => {});
  }

  /** With `owner`: a writer as reader (or writer again), a reader again or its upgrade. */
  private async reenterByOwner(p: KProc, rw: ReadWriteLock, h: LockHandle, kind: Kind): Promise<void> {
    const owner = h.owner;
    if (kind === "read" && this.t.rng.chance(0.5)) {
      await this.upgrade(p, rw.resource, owner, (waitMs) => rw.write.acquire({ owner, waitMs }));
      return;
    }
    const again = this.t.rng.chance(0.7) ? "read" : kind;
    const h2 = await this.t.tracked(p, again, rw.resource, owner, 0, () =>
      rw[again as "read" | "write"].acquire({ owner, waitMs: 0 }),
    );
    this.t.s.keep(p, h2, again);
    await this.t.releaseBoth(p, h, h2);
  }

  private async rwTry(p: KProc, r: string): Promise<void> {
    const rw = p.locks.readWrite(r);
    const kind = this.t.rng.chance(0.4) ? "write" : "read";
    const h = await this.t.tracked(p, kind, r, undefined, 0, () => rw[kind].tryAcquire(this.t.leaseOpt()));
    if (!h) return;
    this.t.s.keep(p, h, kind);
    await p.sim.sleep(this.t.rng.int(1, 100));
    await h.release().catch(() => {});
  }
}
