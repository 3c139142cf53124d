import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { OpRecord } from "../fixtures/wire.mjs";
import type { Source } from "./checker.js";

const holderJs = fileURLToPath(new URL("../fixtures/holder.mjs", import.meta.url));

type Reply = { id: number; ok: boolean; at: number; error?: string; name?: string } & Record<string, unknown>;

export interface ChildEvent {
  /** Parent time base (mapped). */
  at: number;
  event: { type: string; reason?: string; [k: string]: unknown };
}

/**
 * A holder process (fixtures/holder.mjs). Its clock is mapped onto ours: every ping gives a window
 * [sent - childNow, received - childNow] that must contain the offset, and the intersection of many
 * windows is tight (tens of µs). Both processes read CLOCK_MONOTONIC, so the offset never drifts.
 */
export class Holder {
  readonly ops = new Map<number, OpRecord>();
  readonly events: ChildEvent[] = [];
  diedAt: number | undefined;
  private offsetLo = Number.NEGATIVE_INFINITY;
  private offsetHi = Number.POSITIVE_INFINITY;
  private nextId = 1;
  private readonly pending = new Map<number, (r: Reply) => void>();
  private readonly up: Promise<void>;

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    let markUp: () => void;
    this.up = new Promise((r) => {
      markUp = r;
    });
    child.on("message", (m: Reply & { ev?: string; rec?: OpRecord; event?: ChildEvent["event"] }) => {
      if (m.ev === "up") markUp();
      else if (m.ev === "op" && m.rec) this.ops.set(m.rec.id, m.rec);
      else if (m.ev === "lock" && m.event) this.events.push({ at: m.at, event: m.event });
      else if (m.ev === "aborted") this.events.push({ at: m.at, event: { type: "aborted" } });
      else if (typeof m.id === "number") {
        this.pending.get(m.id)?.(m);
        this.pending.delete(m.id);
      }
    });
  }

  static async start(
    name: string,
    init: { redisUrl: string; leaseMs: number; instanceId?: string; caFile?: string },
  ): Promise<Holder> {
    const child = fork(holderJs, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const h = new Holder(name, child);
    await h.up;
    await h.sync(30);
    await h.call("init", { instanceId: name, ...init });
    return h;
  }

  /** Half-width of the mapping window: the uncertainty of every mapped time. */
  get errMs(): number {
    return (this.offsetHi - this.offsetLo) / 2;
  }

  /** A child time on the parent's time base (centre of the window; errMs either side). */
  map(t: number): number {
    return t + (this.offsetLo + this.offsetHi) / 2;
  }

  async sync(rounds: number): Promise<void> {
    for (let i = 0; i < rounds; i++) {
      const sent = performance.now();
      const r = await this.call("ping");
      const got = performance.now();
      const childNow = r.now as number;
      this.offsetLo = Math.max(this.offsetLo, sent - childNow);
      this.offsetHi = Math.min(this.offsetHi, got - childNow);
    }
    if (this.offsetLo > this.offsetHi) throw new Error(`${this.name}: inconsistent clock windows`);
  }

  /** Sends a command; resolves with the reply (rejects when the child answers with an error). */
  async call(cmd: string, args: Record<string, unknown> = {}): Promise<Reply> {
    const r = await this.send(cmd, args);
    if (!r.ok) throw Object.assign(new Error(r.error), { name: r.name ?? "Error" });
    return r;
  }

  /** Sends a command; resolves with the raw reply, errors included. */
  send(cmd: string, args: Record<string, unknown> = {}): Promise<Reply> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.child.send({ id, cmd, ...args });
    });
  }

  signal(sig: NodeJS.Signals): void {
    if (sig === "SIGKILL") this.diedAt = performance.now();
    process.kill(this.child.pid!, sig);
  }

  /** The checker's view of this process. */
  source(): Source {
    const ops = [...this.ops.values()].map((r) => ({
      ...r,
      sent: this.map(r.sent),
      done: r.done === undefined ? undefined : this.map(r.done),
    }));
    return { name: this.name, ops, errMs: this.errMs, diedAt: this.diedAt };
  }

  /** Library events mapped onto the parent's time base. */
  lockEvents(): ChildEvent[] {
    return this.events.map((e) => ({ ...e, at: this.map(e.at) }));
  }

  async stop(): Promise<void> {
    const c = this.child;
    if (c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once("exit", () => r()));
    try {
      process.kill(c.pid!, "SIGCONT");
      process.kill(c.pid!, "SIGKILL");
    } catch {}
    await exited;
  }
}
