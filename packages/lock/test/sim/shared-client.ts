import type { Faults, SimConnection } from "./backend.js";
import { SimNodeSubscriber } from "./redlock.js";
import type { SharedMode, SharedModel } from "./shared-model.js";
import type { SimProcess, World } from "./world.js";

type Settled = { ok: true; value: unknown } | { ok: false; err: unknown };
const unwrap = <T>(s: Settled): T => {
  if (!s.ok) throw s.err;
  return s.value as T;
};

/**
 * What src/redis/shared-backend.ts uses of an ioredis client, over the simulated network and the shared-lock
 * model: the three shared scripts as the commands defineCommand would add (arguments arrive as Redis would
 * see them: strings, converted as the Lua converts them), and `duplicate()` for the release subscriber. So
 * the semaphores and read-write locks run the library's own store code, not a twin of it.
 */
export class SimSharedClient {
  readonly options = {};
  readonly isCluster = false;

  constructor(
    private readonly world: World,
    private readonly proc: SimProcess,
    private readonly faults: Faults,
    private readonly conn: SimConnection,
    private readonly model: SharedModel,
    /** Told of each subscriber made: release messages go to those listening on the channel. */
    private readonly subscribed: (s: SimNodeSubscriber) => void,
  ) {}

  defineCommand(): void {}

  lockyardSharedAcquire(...a: (string | number)[]): Promise<[number, number, number]> {
    const [lock, fence, q, qt, ch, owner, lease, more, mode, permits, mark, join, qlease] = a.map(
      String,
    ) as string[];
    const run = () =>
      this.model.acquire(
        lock!,
        fence!,
        { q: q!, qt: qt!, ch: ch!, qlease: Number(qlease) },
        owner!,
        Number(lease),
        more === "1",
        mode as SharedMode,
        Number(permits),
        Number(mark),
        join === "1",
      );
    return this.call(run, `${mode} acquire ${lock} ${owner}`);
  }

  lockyardSharedLeave(...a: (string | number)[]): Promise<number> {
    const [q, qt, ch, owner, , succ, qlease] = a.map(String) as string[];
    return this.call(
      () => this.model.leave(q!, qt!, ch!, owner!, succ ?? "", Number(qlease ?? "0")),
      `semaphore leave ${q} ${owner} successor:${succ ?? ""}`,
    );
  }

  lockyardSharedWithdraw(...a: (string | number)[]): Promise<number> {
    const [lock, ch, owner] = a.map(String) as string[];
    return this.call(() => this.model.withdraw(lock!, ch!, owner!), `writer withdraw ${lock} ${owner}`);
  }

  lockyardSharedRelease(...a: (string | number)[]): Promise<[number, number, number?]> {
    const [lock, channel, q, qt, fence, owner, mode, token, , next, nextLease, qlease] = a.map(
      String,
    ) as string[];
    const run = () =>
      this.model.release(
        lock!,
        channel!,
        q!,
        qt!,
        fence!,
        owner!,
        mode as "read" | "write",
        token!,
        next ?? "",
        Number(nextLease ?? "0"),
        Number(qlease ?? "0"),
      );
    return this.call(run, `${mode} release ${lock} ${owner}${next ? ` next:${next}` : ""}`);
  }

  lockyardSharedRenewMany(n: number, ...args: (string | number)[]): Promise<number[]> {
    const items = args.slice(0, n).map((key, i) => ({
      key: String(key),
      owner: String(args[n + 2 * i]),
      lease: Number(args[n + 2 * i + 1]),
    }));
    return this.call(() => this.model.renewMany(items), `shared renewMany ${n}`);
  }

  duplicate(): SimNodeSubscriber {
    const s = new SimNodeSubscriber(this.world, this.proc, this.faults, 0);
    this.subscribed(s);
    return s;
  }

  private async call<T>(run: () => T, label: string): Promise<T> {
    const [r] = await this.conn.send<[Settled]>([run], label);
    return unwrap<T>(r);
  }
}
