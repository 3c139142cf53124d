import type { Logger } from "pino";
import type { LocksSnapshotEvent } from "../types.js";
import { applyRaw, applyScan, dueAt, firstExpiry, fleetingLock } from "./apply.js";
import { fanOut } from "./fanout.js";
import { LOCK_PREFIX } from "./keys.js";
import { TAKEN_EVENT } from "./notifications.js";
import { applyPoll, pollStores } from "./poll.js";
import { isClusterClient, masters, type RawLock, type RedisClient, readLocks, scanLocks } from "./read.js";
import { type Mode, RedisWatch } from "./redis-watch.js";
import type { LockSource } from "./snapshot.js";
import { Subscription } from "./subscription.js";
import { Timers } from "./timers.js";
import { byResource, type Change, type Entry, emptyChange, isEmpty, viewOf } from "./views.js";

export interface LockFeedOptions {
  /** The main Redis (or Cluster): its lock keys are watched through keyspace notifications. */
  redis: RedisClient;
  /** Every store shown, read at each poll (optional stores come and go). The Redis one is not polled. */
  sources: () => readonly LockSource[];
  instanceId: string;
  logger: Logger;
  prefix?: string;
  /** Full resync while notifications work: a safety net for anything missed. Default 60 s. */
  resyncMs?: number;
  /** Full resync when notifications cannot be used (CONFIG or PSUBSCRIBE refused). Default 5 s. */
  fallbackResyncMs?: number;
  /** Poll of the Redlock and PostgreSQL stores, which publish no notifications. Default 200 ms. */
  pollMs?: number;
  /** How long the observer outlives its last subscriber (a reloading page is back within it). Default 3 s. */
  lingerMs?: number;
  /**
   * How often the observer looks for what notifications cannot say, while it uses them: each master's
   * notify-keyspace-events (one CONFIG GET; an operator's CONFIG SET that turns them off publishes nothing), and
   * its DBSIZE (FLUSHALL and FLUSHDB publish no event for the keys they delete). Either found, it resyncs (after
   * turning notifications on again). Default 5 s; the periodic resync alone took up to a minute.
   */
  notificationsCheckMs?: number;
}

type State = "stopped" | "starting" | "running";

const RETRY_MS = 500;
const READ_BATCH = 1_000;
const EXPIRY_SLACK_MS = 25;
/** How often a Cluster's masters are compared with the watched ones. */
const TOPOLOGY_MS = 1_000;

/**
 * The live view's one observer per API instance. It knows every held lock without walking unrelated keys:
 * keyspace notifications for the lock prefix name the key that changed, and only that key is read again. A full
 * SCAN runs when it starts, after a reconnect and as a slow periodic resync (every few seconds instead when
 * notifications cannot be used). Each change goes out once, as a delta, to every subscriber: subscribers cost
 * Redis nothing. It runs only while someone subscribes.
 */
export class LockFeed {
  readonly prefix: string;
  private readonly entries = new Map<string, Entry>();
  private readonly subs = new Set<Subscription>();
  private readonly timers = new Timers();
  private readonly watch: RedisWatch;
  private readonly opts: Required<Omit<LockFeedOptions, "prefix">>;
  private state: State = "stopped";
  private ready = false;
  private closed = false;
  private failed: Error | null = null;
  /** Bumped by every stop: callbacks of an older run see a different number and do nothing. */
  private generation = 0;
  private readonly dirty = new Set<string>();
  /** Dirty keys an event said were taken since their last read request: one the read finds gone was held unseen. */
  private readonly taken = new Set<string>();
  private reading = false;
  /** Keys events touched during the running full scan (null when none runs). */
  private touched: Set<string> | null = null;
  private polling = false;

  constructor(options: LockFeedOptions) {
    this.prefix = options.prefix ?? LOCK_PREFIX;
    this.opts = {
      resyncMs: 60_000,
      fallbackResyncMs: 5_000,
      pollMs: 200,
      lingerMs: 3_000,
      notificationsCheckMs: 5_000,
      ...options,
    };
    const name = `${options.instanceId}:live-view`;
    this.watch = new RedisWatch(options.redis, this.prefix, name, options.logger, this.opts.fallbackResyncMs);
  }

  /** For /metrics and tests: what runs now. */
  get status(): { state: State; mode: Mode; subscribers: number; connections: number; timers: number } {
    return {
      state: this.state,
      mode: this.watch.mode,
      subscribers: this.subs.size,
      connections: this.watch.connections,
      timers: this.timers.size,
    };
  }

  /** A `locks.watch` stream of the locks whose resource starts with `prefix`. */
  watchLocks(prefix: string, signal: AbortSignal | undefined) {
    const sub = new Subscription(prefix);
    this.subs.add(sub);
    this.timers.clear("linger");
    if (this.state === "stopped" && !this.closed) void this.start();
    return sub.events(this, signal);
  }

  snapshot(prefix: string): LocksSnapshotEvent | null {
    if (!this.ready) return null;
    const at = Date.now();
    const locks = [...this.entries.values()]
      .filter((e) => e.resource.startsWith(prefix))
      .sort(byResource)
      .map((e) => viewOf(e, at));
    return { kind: "snapshot", at, instanceId: this.opts.instanceId, locks };
  }

  failure(): Error | "closed" | null {
    return this.closed ? "closed" : this.failed;
  }

  unsubscribe(sub: Subscription): void {
    if (!this.subs.delete(sub) || this.subs.size > 0 || this.state === "stopped") return;
    if (this.opts.lingerMs <= 0) this.stop();
    else this.timers.set("linger", this.opts.lingerMs, () => this.stop());
  }

  /** Stops the observer for good and ends every stream (the server is closing). */
  close(): void {
    this.closed = true;
    this.stop();
    for (const s of this.subs) s.notify();
  }

  private async start(): Promise<void> {
    const gen = ++this.generation;
    this.state = "starting";
    this.failed = null;
    try {
      // Subscribe first, then walk the keyspace: nothing that changes meanwhile is missed.
      await this.watch.start(
        (key, event) => this.onKey(gen, key, event),
        () => this.onReconnect(gen),
      );
      if (gen !== this.generation) return;
      await Promise.all([this.resync(gen), this.poll(gen)]);
      if (gen !== this.generation) return;
      this.state = "running";
      this.ready = true;
      this.scheduleResync(gen);
      if (isClusterClient(this.opts.redis))
        this.timers.set("topology", TOPOLOGY_MS, () => void this.topology(gen));
      this.timers.set(
        "notifications",
        this.opts.notificationsCheckMs,
        () => void this.checkNotifications(gen),
      );
      this.timers.set("poll", this.opts.pollMs, () => void this.pollLoop(gen));
      for (const s of this.subs) s.notify();
    } catch (err) {
      if (gen !== this.generation) return;
      this.opts.logger.warn({ err: (err as Error).message }, "live view: the lock observer could not start");
      this.stop();
      this.failed = err instanceof Error ? err : new Error(String(err));
      for (const s of this.subs) s.notify();
    }
  }

  private stop(): void {
    this.generation++;
    this.state = "stopped";
    this.ready = false;
    this.timers.clearAll();
    this.watch.stop();
    this.entries.clear();
    this.dirty.clear();
    this.taken.clear();
    this.reading = false;
    this.touched = null;
    this.polling = false;
  }

  private onKey(gen: number, key: string, event: string): void {
    if (gen !== this.generation) return;
    this.dirty.add(key);
    if (event === TAKEN_EVENT) this.taken.add(key);
    this.touched?.add(key);
    if (!this.reading) setImmediate(() => void this.flush(gen));
  }

  /** Changes made while a subscriber connection was down were never published: walk the keyspace again. */
  private onReconnect(gen: number): void {
    if (gen === this.generation && this.ready) this.timers.set("resync", 0, () => void this.resyncLoop(gen));
  }

  /** On a Cluster: watch the masters there are now (a failover promotes a replica), then resync. */
  private async topology(gen: number): Promise<void> {
    const added = await this.watch
      .refresh(
        (key, event) => this.onKey(gen, key, event),
        () => this.onReconnect(gen),
      )
      .catch(() => false);
    if (gen !== this.generation) return;
    if (added) this.onReconnect(gen);
    this.timers.set("topology", TOPOLOGY_MS, () => void this.topology(gen));
  }

  /** Notifications turned off behind the observer's back, or keys flushed: a resync finds what went unpublished. */
  private async checkNotifications(gen: number): Promise<void> {
    if (this.watch.mode !== "notifications") return;
    const turnedOn = await this.watch.recheck().catch(() => false);
    const flushed = !turnedOn && (await this.flushed().catch(() => false));
    if (gen !== this.generation) return;
    if (turnedOn || flushed) this.onReconnect(gen);
    this.timers.set("notifications", this.opts.notificationsCheckMs, () => void this.checkNotifications(gen));
  }

  /** Fewer keys in the database than Redis locks shown: only a flush deletes keys without an event. */
  private async flushed(): Promise<boolean> {
    let shown = 0;
    for (const e of this.entries.values()) if (e.store === "redis") shown++;
    if (shown === 0) return false;
    const sizes = await Promise.all(masters(this.opts.redis).map((node) => node.dbsize()));
    return sizes.reduce((a, b) => a + b, 0) < shown;
  }

  /** Reads the keys that events named and sends what changed; one read at a time, later events wait for the next. */
  private async flush(gen: number): Promise<void> {
    if (this.reading || this.dirty.size === 0 || gen !== this.generation) return;
    this.reading = true;
    const keys = [...this.dirty].slice(0, READ_BATCH);
    // A taking whose event came before the request ran before the read: found gone, it is over, not yet to come.
    const taken = new Set(keys.filter((k) => this.taken.delete(k)));
    for (const k of keys) this.dirty.delete(k);
    let read: Map<string, RawLock | null>;
    try {
      read = await readLocks(this.opts.redis, this.prefix, keys);
    } catch {
      if (gen !== this.generation) return;
      this.reading = false;
      for (const k of keys) this.dirty.add(k);
      for (const k of taken) this.taken.add(k);
      this.timers.set("retry", RETRY_MS, () => void this.flush(gen));
      return;
    }
    if (gen !== this.generation) return;
    this.reading = false;
    const change = emptyChange();
    const fleeting: Entry[] = [];
    for (const key of keys) {
      const raw = read.get(key) ?? null;
      const lock = fleetingLock(this.entries, this.prefix, key, raw, taken.has(key));
      if (lock) fleeting.push(lock);
      applyRaw(this.entries, change, key, raw, true);
    }
    // A lock the read came too late for is still shown: added, then removed in the next delta.
    change.added.push(...fleeting);
    this.publish(change);
    if (fleeting.length > 0) this.publish({ ...emptyChange(), removed: fleeting });
    if (this.dirty.size > 0) setImmediate(() => void this.flush(gen));
  }

  /** A full SCAN of the lock prefix, diffed against what is known. */
  private async resync(gen: number): Promise<void> {
    const touched = new Set<string>();
    this.touched = touched;
    try {
      // Notifications found off (and turned on) before the scan: what they missed until then, the scan finds.
      await this.watch.recheck();
      const found = await scanLocks(this.opts.redis, this.prefix);
      if (gen !== this.generation) return;
      const change = emptyChange();
      applyScan(this.entries, change, found, touched);
      this.publish(change);
    } finally {
      if (this.touched === touched) this.touched = null;
    }
  }

  private scheduleResync(gen: number): void {
    const ms = this.watch.mode === "notifications" ? this.opts.resyncMs : this.opts.fallbackResyncMs;
    this.timers.set("resync", ms, () => void this.resyncLoop(gen));
  }

  private async resyncLoop(gen: number): Promise<void> {
    if (this.touched) {
      this.timers.set("resync", RETRY_MS, () => void this.resyncLoop(gen));
      return;
    }
    // Redis unreachable: try again at the next period (a reconnect also triggers one).
    await this.resync(gen).catch(() => undefined);
    if (gen === this.generation) this.scheduleResync(gen);
  }

  private async poll(gen: number): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    const next = await pollStores(this.opts.sources());
    if (gen !== this.generation) return;
    this.polling = false;
    this.publish(applyPoll(this.entries, next));
  }

  private async pollLoop(gen: number): Promise<void> {
    await this.poll(gen);
    if (gen === this.generation) this.timers.set("poll", this.opts.pollMs, () => void this.pollLoop(gen));
  }

  private publish(change: Change): void {
    this.armExpiry();
    if (this.ready && !isEmpty(change)) fanOut(this.subs, change, this.entries, this.opts.instanceId);
  }

  /**
   * Redis deletes an expired key when it is touched or its sampling cycle finds it; one timer at the earliest
   * expiry reads the keys that should be gone, which deletes them at once (and publishes `expired`). The same
   * timer reads a semaphore or read-write lock again when one holder's lease (or a writer's mark) ends before
   * its key: no script runs then, so no event says that holder is gone.
   */
  private armExpiry(): void {
    const first = firstExpiry(this.entries);
    if (first === null) {
      this.timers.clear("expiry");
      return;
    }
    const gen = this.generation;
    this.timers.set("expiry", Math.max(0, first - Date.now()) + EXPIRY_SLACK_MS, () => {
      const now = Date.now();
      for (const e of this.entries.values()) {
        const due = dueAt(e);
        if (due !== null && due <= now) this.dirty.add(e.key);
      }
      void this.flush(gen);
    });
  }
}
