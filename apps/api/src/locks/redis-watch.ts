import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { NodeWatch, type OnKey } from "./node-watch.js";
import { enableKeyspaceEvents, enableWhenReachable, type NotificationsResult } from "./notifications.js";
import { masters, type RedisClient } from "./read.js";

export type Mode = "notifications" | "resync";

/**
 * The keyspace-notification side of the observer: one subscribed connection per master, notifications turned
 * on where the server allows it. A refusal (CONFIG or PSUBSCRIBE denied by an ACL, CONFIG renamed by a managed
 * service) is remembered for the life of the process, logged once, and turns the observer to periodic resyncs.
 */
export class RedisWatch {
  private watches: NodeWatch[] = [];
  private refused: string | null = null;
  private warned = false;
  /** Aborted by stop(): ends the retries of turning notifications on again. */
  private running = new AbortController();
  private readonly reenabling = new Map<Redis, Promise<void>>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly name: string,
    private readonly logger: Logger,
    private readonly fallbackResyncMs: number,
  ) {}

  get mode(): Mode {
    return this.refused === null ? "notifications" : "resync";
  }

  get connections(): number {
    return this.watches.length;
  }

  /** Subscribes on every master; rejects only when Redis cannot be reached. */
  async start(onKey: OnKey, onReconnect: () => void): Promise<void> {
    for (const node of masters(this.redis)) await this.watchNode(node, onKey, onReconnect);
  }

  /**
   * After a Cluster failover the promoted replica is a master nobody watches (and its configuration never
   * had notifications turned on: CONFIG SET is not replicated), and the dead master's watch watches
   * nothing. Watches the masters there are now and drops the others; true when a new master was added,
   * whose changes since it took over were missed (the caller resyncs).
   */
  async refresh(onKey: OnKey, onReconnect: () => void): Promise<boolean> {
    const now = masters(this.redis);
    const address = (n: Redis) => `${n.options.host}:${n.options.port}`;
    const wanted = new Set(now.map(address));
    for (const w of this.watches.filter((x) => !wanted.has(x.address))) w.stop();
    this.watches = this.watches.filter((x) => wanted.has(x.address));
    const have = new Set(this.watches.map((x) => x.address));
    let added = false;
    for (const node of now.filter((n) => !have.has(address(n)))) {
      await this.watchNode(node, onKey, onReconnect);
      added = true;
    }
    return added;
  }

  private async watchNode(node: Redis, onKey: OnKey, onReconnect: () => void): Promise<void> {
    if (this.refused === null) await this.enable(node);
    // A restarted Redis has its configuration back to the default: turn notifications on again, then resync.
    const w = new NodeWatch(
      node,
      this.prefix,
      this.name,
      onKey,
      () => void this.reenable(node).then(onReconnect),
    );
    this.watches.push(w);
    try {
      await w.start();
    } catch (err) {
      this.watches = this.watches.filter((x) => x !== w);
      w.stop();
      if (!(err instanceof Error) || err.name !== "ReplyError") throw err;
      this.refuse(`PSUBSCRIBE refused: ${err.message}`);
    }
  }

  /**
   * Turns notifications on again wherever they went off unnoticed (a restart whose re-enabling failed, an
   * operator's CONFIG SET); true when it had to, since the changes made meanwhile were never published. A node
   * that cannot be reached is left to the next look.
   */
  async recheck(): Promise<boolean> {
    if (this.refused !== null) return false;
    const nodes = new Set(this.watches.map((w) => w.node));
    const turnedOn = await Promise.all([...nodes].map((node) => this.enable(node).catch(() => false)));
    return turnedOn.includes(true);
  }

  stop(): void {
    this.running.abort();
    this.running = new AbortController();
    for (const w of this.watches) w.stop();
    this.watches = [];
  }

  /** `enable` retried until `node` answers: one at a time per node, given up by stop(). */
  private reenable(node: Redis): Promise<void> {
    if (this.refused !== null) return Promise.resolve();
    const pending = this.reenabling.get(node);
    if (pending) return pending;
    const signal = this.running.signal;
    const done = enableWhenReachable(node, signal)
      .then((result) => {
        if (result && !signal.aborted) this.report(result);
      })
      .finally(() => this.reenabling.delete(node));
    this.reenabling.set(node, done);
    return done;
  }

  /** True when notifications were off on `node` and are on now. */
  private async enable(node: Redis): Promise<boolean> {
    const result = await enableKeyspaceEvents(node);
    this.report(result);
    return result.ok && result.set !== null;
  }

  private report(result: NotificationsResult): void {
    if (!result.ok) this.refuse(`CONFIG refused: ${result.reason}`);
    else if (result.set) {
      this.logger.info({ notifyKeyspaceEvents: result.set }, "live view: keyspace notifications turned on");
    }
  }

  private refuse(reason: string): void {
    this.refused ??= reason;
    if (this.warned) return;
    this.warned = true;
    this.logger.warn(
      { reason, resyncMs: this.fallbackResyncMs },
      `live view: cannot use keyspace notifications (${reason}); falling back to a full resync of the lock keys every ${this.fallbackResyncMs} ms. Set notify-keyspace-events to include Kghxe on the server (and allow PSUBSCRIBE) to see changes at once.`,
    );
  }
}
