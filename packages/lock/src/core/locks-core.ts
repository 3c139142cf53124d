import type { Config } from "../config.js";
import { InvalidOptionError, LockLostError, LocksClosedError } from "../errors.js";
import { parseMatch } from "../match.js";
import { acquireAll } from "../multi/acquire-all.js";
import type { MultiHandle } from "../multi/handle.js";
import { lockOrder } from "../multi/order.js";
import {
  checkCount,
  checkKnownKeys,
  checkListOptions,
  checkMs,
  checkOwner,
  checkSignal,
  MIN_LEASE_MS,
} from "../options.js";
import { newOwnerId } from "../owner.js";
import { assertResource, lockKey } from "../resource.js";
import type { AcquireOptions, ListOptions, LockHandle, LockInfo, Locks, MultiLockHandle } from "../types.js";
import {
  acquireLoop,
  type GateSlot,
  type Granted,
  type LoopHost,
  type Request,
  type Waited,
} from "./acquire-loop.js";
import type { LockBackend, ReadsFn, ReleaseReply } from "./backend.js";
import { claimedUntil, type HandedMessage, parseHanded } from "./by-message.js";
import { Deadlines } from "./deadlines.js";
import { awaitAnswer, EARLY_MIN_MS, EarlyGrant, trackUntilAnswered, unansweredGrant } from "./early.js";
import { Handle, type HandleHost } from "./handle.js";
import { type LateHandle, LateReleases } from "./late-release.js";
import { type Named, nextWaiterOf } from "./named.js";
import { guardReads, type ReadsFailure } from "./reads.js";
import { Scope } from "./scope.js";
import { Subscriptions } from "./subscriptions.js";
import { Gate, type QueueStanding, type Waiter, type WaiterRequest } from "./waiters.js";
import { Scheduler } from "./watchdog.js";

/** The Locks implementation over any backend: handles, watchdog, waiter FIFO, scope and lost-lock logic. */
export class LocksCore implements Locks, HandleHost, LoopHost {
  closed = false;
  readonly emit: Config["emit"];
  readonly clock: Config["clock"];
  readonly gates = new Map<string, GateSlot>();
  readonly deadlines: Deadlines;
  private readonly scheduler: Scheduler;
  private readonly late: LateReleases;
  private readonly subs: Subscriptions;
  /**
   * key + owner → token of the latest fresh grant to an owner that was already in use here (a re-entry whose
   * key had expired creates the lock afresh). Older handles of that owner must not release it: their count
   * is gone with the old key, and a decrement would free the new grant under its holder. Empty almost always.
   */
  private readonly regranted = new Map<string, number>();
  /**
   * key + owner → attempts in flight under an owner name already in use (re-entries, explicit owners). Until
   * they are answered the store's count for that owner is unknown here, so a release of it grants nothing early.
   */
  private readonly reentering = new Map<string, number>();
  /**
   * key + owner → re-entries granted here whose release has not been answered: held, lost (its own lease ran
   * out, while another hold of the owner kept the key alive) or releasing. Each may still count in the store's
   * hash, so a release of the owner's own hold may only decrement: it grants nothing early. Dropped at that
   * release, the only one that asks.
   */
  private readonly openReentries = new Map<string, number>();
  /** Store calls put off until after the I/O that follows (sendAfterIo); close() makes them at once. */
  private readonly afterIoCalls = new Set<() => void>();

  constructor(
    readonly backend: LockBackend,
    readonly cfg: Config,
    /** The withLock scope; the read and write sides of a read-write lock share one (a writer re-enters as reader). */
    private readonly scope = new Scope(),
  ) {
    this.emit = cfg.emit;
    this.clock = cfg.clock;
    this.scheduler = new Scheduler(backend, cfg.clock);
    this.deadlines = new Deadlines(cfg.clock);
    // A background retry that freed the lock wakes this process's next waiter as a release's answer does.
    this.late = new LateReleases(backend, cfg.clock, cfg.random, (resource, reply) =>
      this.releaseAnswered(resource, reply),
    );
    this.subs = new Subscriptions(
      backend,
      (resource, message) => {
        const g = this.gates.get(resource);
        if (!(g instanceof Gate)) return;
        const handed = message === undefined ? undefined : parseHanded(message);
        if (handed) this.handedTo(g, handed);
        else if (message?.startsWith(OWED_TO)) g.onOwed(message.slice(OWED_TO.length).split(" "));
        else g.onRelease();
      },
      // After the subscriber reconnects, releases published while it was away were missed: every head looks.
      () => {
        for (const g of this.gates.values()) if (g instanceof Gate) g.wakeHead(true);
      },
    );
  }

  acquire(resources: readonly string[], opts?: AcquireOptions): Promise<MultiLockHandle>;
  acquire(resource: string, opts?: AcquireOptions): Promise<LockHandle>;
  async acquire(
    resource: string | readonly string[],
    opts?: AcquireOptions,
  ): Promise<LockHandle | MultiLockHandle> {
    if (Array.isArray(resource)) return (await this.takeAll(resource, opts, false))!;
    return (await this.take(resource as string, opts, false))!;
  }

  tryAcquire(
    resources: readonly string[],
    opts?: Omit<AcquireOptions, "waitMs">,
  ): Promise<MultiLockHandle | null>;
  tryAcquire(resource: string, opts?: Omit<AcquireOptions, "waitMs">): Promise<LockHandle | null>;
  async tryAcquire(
    resource: string | readonly string[],
    opts?: Omit<AcquireOptions, "waitMs">,
  ): Promise<LockHandle | MultiLockHandle | null> {
    if (Array.isArray(resource)) return this.takeAll(resource, opts, true);
    return this.take(resource as string, opts, true);
  }

  withLock<T>(
    resources: readonly string[],
    fn: (locks: MultiLockHandle) => Promise<T> | T,
    opts?: AcquireOptions,
  ): Promise<T>;
  withLock<T>(resource: string, fn: (lock: LockHandle) => Promise<T> | T, opts?: AcquireOptions): Promise<T>;
  async withLock<T>(
    resource: string | readonly string[],
    fn: ((lock: LockHandle) => Promise<T> | T) | ((locks: MultiLockHandle) => Promise<T> | T),
    opts?: AcquireOptions,
  ): Promise<T> {
    if (Array.isArray(resource)) return this.withLocks(resource, fn as (m: MultiLockHandle) => T, opts);
    return this.withOne(resource as string, fn as (h: LockHandle) => T, opts);
  }

  private async withOne<T>(
    resource: string,
    fn: (lock: LockHandle) => Promise<T> | T,
    opts?: AcquireOptions,
  ): Promise<T> {
    if (typeof fn !== "function") throw new InvalidOptionError("fn", fn, "a function");
    const h = (await this.take(resource, opts, false))!;
    const outcome = await settle(() => this.scope.run(resource, h, () => fn(h)));
    loseIfPastDeadline([h], this.clock.now());
    const release = h.released || this.closed ? undefined : await settle(() => h.release());
    return scopeResult(outcome, release, h.lostError);
  }

  /** withLock over several resources: each is in scope for fn (re-entered by nested calls), all released after. */
  private async withLocks<T>(
    resources: readonly string[],
    fn: (locks: MultiLockHandle) => Promise<T> | T,
    opts?: AcquireOptions,
  ): Promise<T> {
    if (typeof fn !== "function") throw new InvalidOptionError("fn", fn, "a function");
    const m = (await this.takeAll(resources, opts, false))!;
    const run = m.handles.reduceRight<() => Promise<T> | T>(
      (inner, h) => () => this.scope.run(h.resource, h as Handle, inner),
      () => fn(m),
    );
    const outcome = await settle(run);
    const handles = m.handles as Handle[];
    loseIfPastDeadline(handles, this.clock.now());
    const release = this.closed ? undefined : await settle(() => m.release());
    return scopeResult(outcome, release, handles.find((h) => h.lostError)?.lostError);
  }

  private takeAll(
    resources: readonly string[],
    opts: AcquireOptions | undefined,
    once: boolean,
  ): Promise<MultiHandle | null> {
    this.open();
    return acquireAll(
      (r, o, one) => this.take(r, o, one),
      this.clock,
      lockOrder(resources),
      opts,
      this.cfg.waitMs,
      once,
    );
  }

  async list(opts?: ListOptions): Promise<LockInfo[]> {
    this.open();
    checkListOptions(opts);
    // Stores with semaphores and read-write locks route their kinds before this (redis/redis-locks.ts).
    if (opts?.kind !== undefined && opts.kind !== "mutex")
      throw new InvalidOptionError(
        "kind",
        opts.kind,
        '"mutex": this store has no semaphores or read-write locks',
      );
    // A glob over names as given (match.ts); the backend turns it into its own query.
    const match = parseMatch(opts?.match ?? "*").glob;
    const count = checkCount("count", opts?.count ?? 100, 1);
    const limit = checkCount("limit", opts?.limit ?? 10_000, 1);
    const raw = await this.backend.list(match, count, limit);
    return raw.map((info) => {
      const leaseMs = info.owners[0] && this.scheduler.leaseOf(info.key, info.owners[0].owner);
      return leaseMs === undefined ? info : { ...info, leaseMs };
    });
  }

  /** The lease of this owner's hold of `key` when this Locks holds it (list()'s `leaseMs`). */
  leaseOf(key: string, owner: string): number | undefined {
    return this.scheduler.leaseOf(key, owner);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Calls already made go out before close() returns and the client can be quit: a release put off to the
    // I/O that follows (sendAfterIo), and the calls a backend batches until the end of the tick.
    for (const call of [...this.afterIoCalls]) call();
    this.backend.flush?.();
    this.closed = true;
    this.deadlines.expireAll();
    this.scheduler.stop();
    this.late.stop();
    for (const g of this.gates.values()) if (g instanceof Gate) g.wakeAll();
    await this.subs.close();
    await this.backend.close();
  }

  // ---- internals shared with the handle and the acquire loop ----

  sendAfterIo<T>(send: () => Promise<T>, early: EarlyGrant): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const call = () => {
        if (!this.afterIoCalls.delete(call)) return;
        try {
          send().then(resolve, reject);
        } catch (err) {
          reject(err);
        }
      };
      this.afterIoCalls.add(call);
      early.deferred(call);
      this.clock.afterIo(call);
    });
  }

  rewatch(h: Handle): void {
    if (h.state === "held") this.scheduler.add(h);
  }

  unwatch(h: Handle): void {
    this.scheduler.remove(h);
  }

  holdEnded(h: Handle): boolean {
    if (!h.ownOwner) return true;
    if (this.openReentries.size === 0) return false;
    const family = `${h.key}\n${h.owner}`;
    const open = this.openReentries.has(family);
    this.openReentries.delete(family);
    return open;
  }

  reentryAnswered(h: Handle): void {
    const family = `${h.key}\n${h.owner}`;
    const n = this.openReentries.get(family);
    if (n === undefined) return;
    if (n <= 1) this.openReentries.delete(family);
    else this.openReentries.set(family, n - 1);
  }

  releaseFailed(h: Handle, err: unknown): void {
    // A release that never got its answer may or may not have run. Retried, it would decrement a second
    // time, which is harmless only when no other hold of the same owner shares the count: with a re-entry
    // still held here, a second decrement would free the lock under it. Then the count is left to the lease.
    if (this.closed || this.clock.now() >= h.deadline || this.scheduler.hasOtherHold(h)) return;
    if (this.backend.noReply?.(err)) this.late.add(h);
  }

  releaseOrphan(q: WaiterRequest, r: Granted, early?: EarlyGrant): void {
    if (early !== undefined) {
      // Granted by a release of ours still put off or unanswered: a give-back sent now could reach the store
      // first, find not-owner, and leave the grant that follows held by nobody for its lease. It follows the
      // answer instead; a grant the answer denies is passed on by settleEarly.
      early.hurry();
      void early.answer.then((granted) => {
        if (granted) this.releaseOrphan(q, r);
      });
      return;
    }
    r[3]?.catch(() => {});
    const token = r[2] ?? null;
    this.backend.release(q.resource, q.key, q.owner, q.leaseMs, token).then(
      // The give-back freed it: this process's next waiter may take it now (see releaseAnswered).
      (reply) => this.releaseAnswered(q.resource, reply),
      (err: unknown) => {
        // Lost on the way (a connection killed as it was sent): nobody would release it, and everyone would wait
        // out its lease. Retried in the background like any release that got no reply; not a re-entry's, whose
        // second decrement could take the count of the hold it re-entered.
        if (q.bypass || this.closed || !this.backend.noReply?.(err)) return;
        this.late.add(this.lateOf(q, token));
      },
    );
  }

  attemptUnanswered(q: Request, err: unknown): void {
    // An attempt whose reply was lost (connection killed after Redis ran it) may have granted the lock to an
    // owner name nobody will use: nobody would release it, and everyone would wait out its lease. Released
    // in the background like a release that got no reply. Only for a fresh owner name: a re-entry's release
    // could take the count of the hold it re-entered if the attempt never ran. Owner-checked, so harmless
    // when it did not run.
    if (q.bypass || this.closed || !this.backend.noReply?.(err)) return;
    this.releaseUnheard(q);
  }

  /** Releases a fresh owner name that a call we heard no answer from may have granted, until its lease would end. */
  private releaseUnheard(q: WaiterRequest): void {
    this.late.add(this.lateOf(q, null));
  }

  /** A background release of a grant no caller holds, tried until the lease it may have been granted ends. */
  private lateOf(q: WaiterRequest, token: number | null): LateHandle {
    return {
      resource: q.resource,
      key: q.key,
      owner: q.owner,
      leaseMs: q.leaseMs,
      token,
      deadline: this.clock.now() + q.leaseMs,
      releasedLate: () => {},
    };
  }

  withdraw(q: Request): void {
    this.backend.withdraw?.(q.resource, q.key, q.owner).catch(() => {});
  }

  leaveQueue(q: WaiterRequest): void {
    if (!this.backend.leave) return;
    const named = this.closed ? undefined : this.nameNext(q.resource);
    this.backend.leave(q.resource, q.key, q.owner, named && nextWaiterOf(named)).then(
      (reply) => this.settleNamed(named, reply, "joined"),
      (err: unknown) => {
        this.settleNamed(named, undefined, "joined");
        // Lost on the way (a connection killed as it was sent): the entry would stay until its queue lease ran
        // out, and a release in another process would hand the lock to it, held by nobody for a claim lease
        // more. Retried in the background, naming nobody, until both would have run out.
        if (this.closed || !this.backend.noReply?.(err)) return;
        this.late.add({
          ...this.lateOf(q, null),
          leave: true,
          deadline: this.clock.now() + 2 * this.cfg.queueLeaseMs,
        });
      },
    );
  }

  /**
   * Names the gate's head, when it may be handed the lock, as `next` of a release (or `successor` of a leave)
   * about to be sent; settleNamed must follow with that call's answer.
   */
  nameNext(resource: string): Named | undefined {
    // A store that queues without handing over to other processes (the semaphore) names a successor in a leave,
    // and in a release the waiter that may take the freed permit.
    const names = this.backend.handsOver || this.backend.queues;
    if (!names || this.closed) return undefined;
    const g = this.gates.get(resource);
    if (!(g instanceof Gate)) return undefined;
    const w = g.queue[0];
    if (!w || w.req.bypass || w.standing === "named" || w.done || w.handed || w.attempting) return undefined;
    const now = this.clock.now();
    // The time slice: localStreakMs shared by the processes that queue, so that a turn of all of them takes
    // about localStreakMs. Undivided, the first holder kept the lock that long while the others had only
    // just queued, and with P = 8 finished a whole turn ahead of them.
    const sliceMs = this.cfg.localStreakMs / Math.max(1, g.othersQueued ?? 1);
    // Within the streak's count, or while no other process can have queued the slice yet, the store would
    // keep the lock here: say so (unbounded keepMs), which makes the answer certain.
    // (A semaphore's grant is never certain: it depends on the queue, which the streak does not bound.)
    const certain =
      this.backend.handsOver === true &&
      (g.localStreak < this.cfg.localStreak || this.othersQueuedBelow(g, now, sliceMs));
    const keepMs = certain ? ALWAYS_KEEP : sliceMs;
    const named: Named = { g, w, before: w.standing, keepMs, certain, sentAt: now };
    w.standing = "named";
    return named;
  }

  /** An upper bound of how long another process's waiter has queued, from the last answer that said (waiters.ts). */
  private othersQueuedBelow(g: Gate, now: number, ms: number): boolean {
    return g.othersWaited !== undefined && Math.max(g.othersWaited, 0) + (now - g.othersWaitedAt) < ms;
  }

  grantEarly(h: Handle, named: Named): boolean {
    if (this.cfg.localHandoff !== "early" || !named.certain || h.token === null || !h.ownOwner) return false;
    // Another hold of this owner shares the count, so the release may only decrement it: a re-entry granted
    // and not answered releasing (held or lost; sharesCount), or one in flight. Only re-entries share a name
    // the library made.
    if (named.w.req.reads || h.sharesCount || this.reentering.has(`${h.key}\n${h.owner}`)) return false;
    if (h.deadline - this.clock.now() < EARLY_MIN_MS) return false;
    const early = new EarlyGrant(h.token + 1, h.deadline, h.owner);
    if (!named.g.grant(named.w, { token: early.token, reads: undefined, sentAt: named.sentAt, early }))
      return false;
    named.early = early;
    trackUntilAnswered(h.key, named.w.req.owner, early);
    return true;
  }

  /**
   * The answer of a call that named a waiter: [4] granted it the lock (a waiter that gave up meanwhile passes
   * it on at once); otherwise it waits on, in the store's queue when `queued` says the call put it there.
   * No answer: it may have been granted unheard, so it looks at once (its attempt adopts a lock handed to it).
   */
  settleNamed(named: Named | undefined, reply: ReleaseReply | undefined, queued: QueueStanding): void {
    if (!named) return;
    const { g, w } = named;
    if (w.standing === "named") w.standing = named.before;
    if (reply?.[0] === 3) g.localStreak = 0;
    g.othersWaited = reply?.[0] === 4 ? reply[3] : undefined;
    g.othersQueued = reply?.[0] === 4 ? reply[5] : undefined;
    g.othersWaitedAt = named.sentAt;
    if (named.early) {
      this.settleEarly(named, reply);
      return;
    }
    if (reply?.[0] === 4) {
      g.localStreak++;
      const roomLeft = (reply[4] ?? 0) > 0;
      const grant = { token: reply[1], reads: reply[2], sentAt: named.sentAt, roomLeft };
      if (!g.grant(w, grant)) this.releaseOrphan(w.req, [1, 1, grant.token, grant.reads]);
      return;
    }
    // A semaphore's release that could not grant its named waiter the permit queued it instead.
    const queuedByRelease = reply?.[0] === 2 && this.backend.queues === true && !this.backend.handsOver;
    const inQueue = reply === undefined || reply[0] === 3 || queued === "joined" || queuedByRelease;
    if (w.done) {
      // It gave up while named, when it could not leave: a lock handed to it unheard, or a place in the
      // store's queue the call left it, would hold up every other process for a claim or entry lease.
      if (inQueue || named.before === "joined") this.leaveQueue(w.req);
      // A semaphore's release may have granted it a permit unheard, which no leave gives back.
      if (reply === undefined && this.backend.shared && !this.closed) this.releaseUnheard(w.req);
      return;
    }
    if (inQueue) w.standing = "joined";
    // Our release handed the lock elsewhere and queued this waiter: a handoff back to it runs after (by-message.ts).
    if (reply?.[0] === 3) w.probe = { sentAt: named.sentAt, fence: reply[1] };
    if (reply === undefined) w.attemptNow = true;
    // It may have been told to look while it was named (it could not): let it now.
    w.wake?.();
  }

  /**
   * A release of ours that freed the lock (a handle's, the give-back of a grant nobody wanted, or a background
   * retry) wakes this process's next waiter at once, on a mutex store that neither hands the lock over in the
   * release nor queues (PostgreSQL, Redlock, Redis with waitReplicas). There only the release message woke it,
   * which this process's own release need not wait for: with the LISTEN connection out of reach (a pool that
   * could not connect it) each local handoff waited for a fallback look, 200 local waiters drained at two a
   * second and most timed out. A message that follows may wake the next head for one refused look. Semaphores
   * and read-write locks keep waking by message only: a reader's release frees no writer.
   */
  releaseAnswered(resource: string, reply: ReleaseReply): void {
    if (reply[0] !== 2 || this.backend.handsOver || this.backend.queues || this.backend.shared) return;
    const g = this.gates.get(resource);
    if (g instanceof Gate) g.onRelease();
  }

  /** The answer of a release whose named waiter was granted the lock early: confirms it, or takes it back. */
  private settleEarly(named: Named, reply: ReleaseReply | undefined): void {
    const { g, w, early } = named;
    const granted = reply?.[0] === 4 && reply[1] === early!.token;
    if (granted) g.localStreak++;
    early!.answered(granted);
    if (granted) return;
    // It no longer waits: a grant under another token goes on, and a place in the store's queue the call left
    // it (or may have: no answer) is given up.
    if (reply?.[0] === 4) this.releaseOrphan(w.req, [1, 1, reply[1], undefined]);
    if (reply === undefined || reply[0] === 3 || named.before === "joined") this.leaveQueue(w.req);
  }

  /** The store handed the lock to a waiter of ours: it holds it from the message when that is safe, else it looks. */
  private handedTo(g: Gate, m: HandedMessage): void {
    const w = g.queue.find((x) => x.req.owner === m.owner);
    if (w && this.holdsByMessage(g, w, m)) return;
    g.onHandedTo(m.owner);
  }

  private holdsByMessage(g: Gate, w: Waiter, m: HandedMessage): boolean {
    if (this.cfg.handoffAdoption !== "message") return false;
    // Between attempts and named by no call of ours: an answer in flight could grant it the lock as well.
    if (w.standing !== "joined" || w.attempting || w.done || w.handed) return false;
    // The store holds it under the claim lease until a renewal raises it to the lease asked for (only the
    // watchdog renews by itself), and reads go out with an attempt.
    if (!w.req.watchdog || w.req.reads) return false;
    const until = claimedUntil(w.probe, m.token, m.claimMs);
    if (until === undefined || until - this.clock.now() < m.claimMs / 3) return false;
    return g.grant(w, { token: m.token, reads: undefined, sentAt: w.probe!.sentAt, claimedUntil: until });
  }

  subscribe(g: Gate, resource: string): void {
    if (g.subscription !== "none" || this.closed) return;
    g.subscription = "subscribing";
    void this.subs.add(resource).then((ok) => {
      if (this.gates.get(resource) !== g) {
        if (ok) this.subs.remove(resource);
        return;
      }
      if (ok) {
        g.subscription = "subscribed";
        g.subscribeFailures = 0;
        g.wakeHead(true);
        return;
      }
      // Failed: the next failed attempt of the head subscribes again; meanwhile its timer does the work.
      // The first failure looks (and so subscribes again) at once: a new subscriber connection can refuse a
      // SUBSCRIBE while it connects (ioredis 5.8–5.11). One that Redis keeps refusing (a user without channel
      // rights) is tried again only with the head's timed looks: looking at once each time is a busy loop.
      g.subscription = "none";
      this.subs.remove(resource);
      if (g.subscribeFailures++ === 0) g.wakeHead(true);
    });
  }

  dropIfIdle(g: Gate, resource: string): void {
    if (!g.idle || this.gates.get(resource) !== g) return;
    this.gates.delete(resource);
    if (g.subscription === "subscribed") this.subs.remove(resource);
  }

  acquired(q: Request, r: Granted, w: Waited): Handle {
    const [, count, token, reads] = r;
    if (q.bypass && count === 1 && token != null) this.regrant(q, token);
    const h = new Handle(this, {
      resource: q.resource,
      key: q.key,
      owner: q.owner,
      token: token ?? null,
      count,
      leaseMs: q.leaseMs,
      watchdog: q.watchdog,
      sentAt: w.sentAt,
      ownOwner: !q.bypass,
      early: w.early,
      claimedUntil: w.claimedUntil,
    });
    if (reads) h.reads = reads;
    if (q.bypass) {
      const family = `${q.key}\n${q.owner}`;
      this.openReentries.set(family, (this.openReentries.get(family) ?? 0) + 1);
    }
    this.scheduler.add(h);
    this.emit?.({
      type: "acquired",
      resource: q.resource,
      owner: q.owner,
      token: h.token,
      count: h.count,
      waitedMs: this.clock.now() - w.start,
      attempts: w.attempts,
    });
    return h;
  }

  /** See `regranted`: the owner's older handles of this key lost their lock when its key went away. */
  private regrant(q: Request, token: number): void {
    this.regranted.set(`${q.key}\n${q.owner}`, token);
    for (const h of this.scheduler.holdsOf(q.key, q.owner)) h.lose("expired");
  }

  /** True when a newer grant of the same key to the same owner superseded this handle's count. */
  superseded(h: Handle): boolean {
    if (this.regranted.size === 0 || h.token === null) return false;
    const id = `${h.key}\n${h.owner}`;
    const newer = this.regranted.get(id);
    if (newer === undefined) return false;
    if (newer === h.token) {
      this.regranted.delete(id);
      return false;
    }
    return newer > h.token;
  }

  /** A re-entry of an owner granted early goes to the store after that grant's answer, within its own waitMs. */
  private async reenterAfter(grant: EarlyGrant, q: Request): Promise<Handle | null> {
    const start = this.clock.now();
    const bounded = !q.once && q.waitMs > 0;
    grant.hurry();
    await awaitAnswer(this.clock, grant.answer, bounded ? q.waitMs : undefined, q.signal);
    if (!bounded) return acquireLoop(this, q);
    // Out of time already: one attempt, bounded by its own deadline, ends it (LockTimeoutError if refused).
    return acquireLoop(this, { ...q, waitMs: Math.max(q.waitMs - (this.clock.now() - start), 1) });
  }

  private open(): void {
    if (this.closed) throw new LocksClosedError();
  }

  private take(resource: string, opts: AcquireOptions | undefined, once: boolean): Promise<Handle | null> {
    this.open();
    assertResource(resource);
    let leaseMs = this.cfg.leaseMs;
    let watchdog = true;
    let waitMs = this.cfg.waitMs;
    let owner: string | undefined;
    let signal: AbortSignal | undefined;
    let reads: ReadsFn | undefined;
    let readsFailure: ReadsFailure | undefined;
    if (opts !== undefined) {
      if (typeof opts !== "object" || opts === null)
        throw new InvalidOptionError("options", opts, "an object");
      checkKnownKeys(opts, ACQUIRE_KEYS);
      // Accepted and ignored, it would read as a wait the call never makes.
      if (once && (opts as AcquireOptions).waitMs !== undefined)
        throw new InvalidOptionError(
          "waitMs",
          (opts as AcquireOptions).waitMs,
          "unset: tryAcquire tries once; acquire waits up to waitMs",
        );
      if (opts.leaseMs !== undefined) {
        leaseMs = checkMs("leaseMs", opts.leaseMs, MIN_LEASE_MS);
        watchdog = false;
      }
      if (opts.waitMs !== undefined) waitMs = checkMs("waitMs", opts.waitMs, 0);
      if (opts.owner !== undefined) owner = checkOwner(opts.owner);
      signal = checkSignal(opts.signal);
      if (opts.reads !== undefined) {
        if (typeof opts.reads !== "function") throw new InvalidOptionError("reads", opts.reads, "a function");
        if (!this.backend.canRead)
          throw new InvalidOptionError(
            "reads",
            "set",
            "unset: reads go with the attempts of a mutex on Redis or a Redis Cluster only (not semaphores, read-write locks, Redlock or PostgreSQL)",
          );
        readsFailure = {};
        reads = guardReads(opts.reads, readsFailure);
      }
      signal?.throwIfAborted();
    }
    owner ??= this.scope.ownerOf(resource);
    const bypass = owner !== undefined;
    const key = lockKey(this.cfg.prefix, resource);
    const request: Request = {
      resource,
      key,
      owner: owner ?? newOwnerId(this.cfg.instanceId),
      leaseMs,
      watchdog,
      waitMs: once ? 0 : waitMs,
      signal,
      reads,
      bypass,
      once,
      readsFailure,
    };
    if (!bypass) return acquireLoop(this, request);
    const id = `${key}\n${request.owner}`;
    this.reentering.set(id, (this.reentering.get(id) ?? 0) + 1);
    // A re-entry of an owner granted early waits for the release that grants it: sent in the same tick it could
    // reach the store before that release (another batch) and be refused by the hold it re-enters.
    const grant = unansweredGrant(key, request.owner);
    const run = grant ? this.reenterAfter(grant, request) : acquireLoop(this, request);
    return run.finally(() => {
      const n = this.reentering.get(id)! - 1;
      if (n === 0) this.reentering.delete(id);
      else this.reentering.set(id, n);
    });
  }
}

const ACQUIRE_KEYS: ReadonlySet<string> = new Set([
  "leaseMs",
  "waitMs",
  "owner",
  "signal",
  "reads",
] satisfies (keyof AcquireOptions)[]);

/** keepMs for a local grant within the streak's count: whoever queues elsewhere, however long. */
const ALWAYS_KEEP = Number.MAX_SAFE_INTEGER;

/** A release message naming the queued owners its free permits are owed to (redis/scripts/shared-release.ts). */
const OWED_TO = "n:";

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** The watchdog's timer may not have fired yet: a passed deadline is a loss all the same. */
function loseIfPastDeadline(handles: readonly Handle[], now: number): void {
  for (const h of handles)
    if (h.state === "held" && now >= h.deadline) h.lose(h.watchdog ? "deadline" : "expired");
}

/**
 * What withLock answers: a loss wins (with fn's own error as its cause), then fn's error, then the release's;
 * else fn's value.
 */
function scopeResult<T>(
  outcome: Settled<T>,
  release: Settled<unknown> | undefined,
  lost: LockLostError | undefined,
): T {
  if (lost) {
    if (outcome.ok || outcome.error === lost) throw lost;
    throw new LockLostError(lost.resource, lost.owner, lost.reason, { cause: outcome.error });
  }
  if (!outcome.ok) throw outcome.error;
  if (release && !release.ok) throw release.error;
  return outcome.value;
}

async function settle<T>(fn: () => Promise<T> | T): Promise<Settled<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error };
  }
}
