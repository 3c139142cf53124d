import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { redlockAcquire } from "../../src/redis/scripts/redlock-acquire.js";
import { redlockRelease } from "../../src/redis/scripts/redlock-release.js";
import type { Faults, SimConnection } from "./backend.js";
import type { ModelRedis } from "./model.js";
import type { SimProcess, World } from "./world.js";

const sha = (lua: string) => createHash("sha1").update(lua).digest("hex");
const SCRIPTS = new Map([
  [sha(redlockAcquire.lua), "acquire"],
  [sha(redlockRelease.lua), "release"],
]);

type Settled = { ok: true; value: unknown } | { ok: false; err: unknown };
const unwrap = <T>(s: Settled): T => {
  if (!s.ok) throw s.err;
  return s.value as T;
};
const closedError = () => Object.assign(new Error("Connection is closed."), { name: "Error" });

type Listener = (...args: unknown[]) => void;

/**
 * What the Redlock backend (src/redlock) uses of an ioredis client, over one simulated node: script calls by
 * `sendCommand` (EVALSHA of the real scripts, recognised by their SHA; the command is marked written when it
 * leaves, as ioredis's socket write would), the shared renew scripts, and `duplicate()` for a subscriber.
 */
export class SimNodeClient {
  readonly options = {};
  readonly isCluster = false;

  constructor(
    private readonly world: World,
    private readonly proc: SimProcess,
    private readonly faults: Faults,
    private readonly conn: SimConnection,
    private readonly node: () => ModelRedis,
    readonly index: number,
    private readonly subscribers: Set<SimNodeSubscriber>,
  ) {}

  defineCommand(): void {}

  sendCommand(cmd: {
    name: string;
    args: unknown[];
    toWritable?(socket: unknown): unknown;
  }): Promise<unknown> {
    const [id, , ...rest] = cmd.args.map(String);
    const op = SCRIPTS.get(cmd.name === "eval" ? sha(id!) : id!);
    if (!op) return Promise.reject(new Error(`sim node: unknown script ${cmd.name}`));
    if (!this.conn.up) return Promise.reject(closedError());
    cmd.toWritable?.({});
    const run =
      op === "acquire"
        ? () => this.node().redlockAcquire(rest[0]!, rest[1]!, Number(rest[2]), rest[3] === "1")
        : () => this.node().redlockRelease(rest[0]!, rest[1]!, rest[2]!, Number(rest[3]), rest[4] !== "0");
    return this.conn
      .send<[Settled]>([run], `n${this.index} ${op} ${rest[0]} ${op === "acquire" ? rest[1] : rest[2]}`)
      .then(([r]) => unwrap(r));
  }

  lockyardRenew(key: string, owner: string, leaseMs: number): Promise<number> {
    return this.conn
      .send<[Settled]>([() => this.node().renew(key, owner, leaseMs)], `n${this.index} renew ${key} ${owner}`)
      .then(([r]) => unwrap<number>(r));
  }

  lockyardRenewMany(n: number, ...args: (string | number)[]): Promise<number[]> {
    const keys = args.slice(0, n).map(String);
    const ops = keys.map(
      (k, i) => () => this.node().renew(k, String(args[n + 2 * i]), Number(args[n + 2 * i + 1])),
    );
    return this.conn
      .send<Settled[]>(ops as never, `n${this.index} renewMany ${n}`)
      .then((rs) => rs.map((r) => unwrap<number>(r)));
  }

  duplicate(): SimNodeSubscriber {
    const s = new SimNodeSubscriber(this.world, this.proc, this.faults, this.index);
    this.subscribers.add(s);
    return s;
  }
}

/**
 * A subscriber connection to one node, as the library makes it (autoResubscribe off): a reconnect forgets its
 * channels until the library subscribes them again on "ready"; messages sent meanwhile are lost.
 */
export class SimNodeSubscriber {
  up = true;
  closed = false;
  /** As ioredis names it: a SUBSCRIBE waits for "ready" (src/redis/when-ready.ts). */
  status: "connecting" | "ready" | "reconnecting" | "end" = "connecting";
  private readonly channels = new Set<string>();
  private readonly listeners = new Map<string, Listener[]>();

  constructor(
    private readonly world: World,
    private readonly proc: SimProcess,
    private readonly faults: Faults,
    readonly index: number,
  ) {
    world.after(1, () => this.becomeReady(), proc);
  }

  on(event: string, fn: Listener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), fn]);
    return this;
  }
  once(event: string, fn: Listener): this {
    const once: Listener & { of?: Listener } = (...args: unknown[]) => {
      this.off(event, fn);
      fn(...args);
    };
    once.of = fn;
    return this.on(event, once);
  }
  off(event: string, fn: Listener): this {
    const kept = (this.listeners.get(event) ?? []).filter(
      (l) => l !== fn && (l as { of?: Listener }).of !== fn,
    );
    this.listeners.set(event, kept);
    return this;
  }
  private becomeReady(): void {
    if (this.closed) return;
    this.status = "ready";
    this.emit("ready");
  }
  removeAllListeners(event: string): this {
    this.listeners.delete(event);
    return this;
  }
  private emit(event: string, ...args: unknown[]): void {
    if (this.closed) return;
    for (const fn of this.listeners.get(event) ?? []) fn(...args);
  }

  subscribe(...channels: string[]): Promise<number> {
    return new Promise((resolve, reject) => {
      this.world.after(
        this.world.rng.int(...this.faults.delayMs) * 2,
        () => {
          if (this.closed) return;
          if (!this.up) return reject(closedError());
          for (const ch of channels) this.channels.add(ch);
          resolve(this.channels.size);
        },
        this.proc,
      );
    });
  }
  unsubscribe(...channels: string[]): Promise<number> {
    for (const ch of channels) this.channels.delete(ch);
    return Promise.resolve(0);
  }
  disconnect(): void {
    this.status = "end";
    this.emit("end");
    this.closed = true;
    this.channels.clear();
  }

  deliver(channel: string, message: string): void {
    if (!this.up || this.closed || !this.channels.has(channel)) return;
    this.world.after(
      this.world.rng.int(...this.faults.delayMs),
      () => {
        if (this.up && this.channels.has(channel)) this.emit("message", channel, message);
      },
      this.proc,
    );
  }

  kill(): void {
    if (this.closed) return;
    this.up = false;
    this.status = "reconnecting";
    this.channels.clear();
    this.world.log(`${this.proc.name} subscriber to n${this.index} killed`);
    this.world.after(
      this.world.rng.int(...this.faults.reconnectMs),
      () => {
        if (this.closed) return;
        this.up = true;
        this.becomeReady();
      },
      this.proc,
    );
  }
}

export type SimRedisClient = SimNodeClient & Redis;
