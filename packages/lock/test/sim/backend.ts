import type {
  AcquireReply,
  LockBackend,
  LockKeys,
  NextWaiter,
  ReadsFn,
  ReleaseListener,
  ReleaseReply,
  ReleaseSubscriber,
  WriteFn,
} from "../../src/core/backend.js";
import { namedInStore } from "../../src/core/early.js";
import type { RedisClient } from "../../src/redis/scripts/index.js";
import type { HandoffArgs, ModelRedis } from "./model.js";
import type { SimProcess, World } from "./world.js";

/** How hostile the network is in one run; chosen from the seed. */
export interface Faults {
  /** A request that never reaches Redis. */
  loseRequest: number;
  /** A command Redis ran whose reply never comes back. */
  loseReply: number;
  /** Usual one-way delay range, ms. */
  delayMs: [number, number];
  /** Chance of a slow delivery (a stall of up to slowMs). */
  slow: number;
  slowMs: number;
  /** The client's commandTimeout: an unanswered call fails after it. */
  commandTimeoutMs: number;
  reconnectMs: [number, number];
  /**
   * Optional: asked for each release message a subscriber is about to receive; true kills the subscriber
   * with that message in flight (lost), the window where only a wake-up on resubscribe saves the waiter.
   */
  dieOnMessage?: () => boolean;
}

type Op = () => unknown;

const closedError = () => Object.assign(new Error("Connection is closed."), { name: "Error" });
const timeoutError = () => Object.assign(new Error("Command timed out"), { name: "Error" });

/** One client connection of a simulated process to the simulated Redis. */
export class SimConnection {
  up = true;
  epoch = 0;
  private pending = new Set<{ reject(e: unknown): void; epoch: number }>();
  /** FIFO delivery: when the last request reached Redis and the last reply reached the client. */
  private lastArrival = 0;
  private lastReply = 0;
  /**
   * When the process last heard of a call of this connection that failed or was lost (a request or reply lost or
   * too slow: its timeout; a kill; a send while down), and when a slow delivery last arrived: the orphan check (I11 in run.ts) gives
   * the library time to recover from each before it judges.
   */
  lastLossAt = Number.NEGATIVE_INFINITY;
  lastSlowAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly world: World,
    private readonly proc: SimProcess,
    private readonly faults: Faults,
    private readonly afterRun: () => void,
    /**
     * Deliver requests and replies in order, as one TCP connection does. Off for the single Redis, whose
     * runs (and the catch table in README.md) let any message overtake another: stricter than a socket.
     * On for Redlock's nodes, whose undo of a failed attempt relies on running before the owner's next
     * attempt sent after it on the same connection (redlock/node-releases.ts).
     */
    private readonly fifo = false,
  ) {}

  /** When a message sent now arrives: after its delay, and in FIFO mode not before the previous one. */
  private arrival(last: "lastArrival" | "lastReply"): number {
    const at = this.world.now + this.delay();
    if (!this.fifo) return at;
    this[last] = Math.max(at, this[last]);
    return this[last];
  }

  private delay(): number {
    const { rng } = this.world;
    const [lo, hi] = this.faults.delayMs;
    if (!rng.chance(this.faults.slow)) return rng.int(lo, hi);
    const ms = rng.int(lo, this.faults.slowMs);
    this.lastSlowAt = Math.max(this.lastSlowAt, this.world.now + ms);
    return ms;
  }

  /** Sends ops as one message; they run in order in Redis; the replies come back together. */
  send<T extends unknown[]>(ops: { [K in keyof T]: Op }, label: string): Promise<T> {
    const { world } = this;
    if (!this.up) {
      this.lastLossAt = world.now;
      return Promise.reject(closedError());
    }
    return new Promise<T>((resolve, reject) => {
      const epoch = this.epoch;
      const call = { reject, epoch };
      let settled = false;
      this.pending.add(call);
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        this.pending.delete(call);
        fn();
      };
      const lostRequest = world.rng.chance(this.faults.loseRequest);
      const lostReply = world.rng.chance(this.faults.loseReply);
      // A call that will get no answer leaves what it may have done unclaimed until its timeout is heard.
      if (lostRequest || lostReply)
        this.lastLossAt = Math.max(this.lastLossAt, world.now + this.faults.commandTimeoutMs);
      world.after(
        this.faults.commandTimeoutMs,
        () =>
          settle(() => {
            this.lastLossAt = Math.max(this.lastLossAt, world.now);
            reject(timeoutError());
          }),
        this.proc,
      );
      if (lostRequest) {
        world.log(`${this.proc.name} ${label}: request lost`);
        return;
      }
      world.at(this.arrival("lastArrival"), () => {
        if (this.epoch !== epoch) return;
        const replies: unknown[] = [];
        for (const op of ops) {
          try {
            replies.push({ ok: true, value: op() });
          } catch (err) {
            replies.push({ ok: false, err });
          }
        }
        this.afterRun();
        world.log(
          `${this.proc.name} ${label} ran → ${JSON.stringify(replies.map((r) => (r as { value?: unknown }).value))}${lostReply ? " (reply lost)" : ""}`,
        );
        if (lostReply) return;
        world.at(
          this.arrival("lastReply"),
          () => {
            if (this.epoch !== epoch) return;
            settle(() => resolve(replies as T));
          },
          this.proc,
        );
      });
    });
  }

  /** Kills the connection: calls in flight fail with a connection error; it comes back after a while. */
  kill(): void {
    this.epoch++;
    this.lastArrival = 0;
    this.lastReply = 0;
    this.up = false;
    // Heard when the process runs: a paused one learns of it only after its pause, as a stalled event loop does.
    for (const c of this.pending) this.world.after(0, () => c.reject(closedError()), this.proc);
    this.pending.clear();
    const [lo, hi] = this.faults.reconnectMs;
    const downMs = this.world.rng.int(lo, hi);
    this.lastLossAt = Math.max(this.lastLossAt, this.world.now + downMs);
    this.world.after(downMs, () => {
      this.up = true;
    });
  }
}

type Settled = { ok: true; value: unknown } | { ok: false; err: unknown };
const unwrap = <T>(s: Settled): T => {
  if (!s.ok) throw s.err;
  return s.value as T;
};

/** The facade a `reads` or `releaseAfter` write function sees instead of an ioredis client. */
export interface SimRedis {
  fencedRead(key: string, fields: string[]): Promise<[number, ...(string | null)[]]>;
  fencedWrite(key: string, token: number, delta: number): Promise<[number, number]>;
}

/** The subscriber of one process: subscriptions survive reconnects (the library subscribes again on ready, redis/resubscribe.ts), messages sent while it is down are lost. */
export class SimSubscriber implements ReleaseSubscriber {
  up = true;
  readonly channels = new Set<string>();
  closed = false;
  /** Its process's instance id (the process's name in the simulation): it alone hears handoffs to that process. */
  get instance(): string {
    return this.proc.name;
  }

  constructor(
    private readonly world: World,
    private readonly proc: SimProcess,
    private readonly faults: Faults,
    private readonly onRelease: (resource: string, message?: string) => void,
    private readonly onResubscribed: (() => void) | undefined,
  ) {}

  subscribe(resource: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (!this.up) return reject(closedError());
      this.world.after(
        this.world.rng.int(...this.faults.delayMs) * 2,
        () => {
          if (this.closed) return;
          if (!this.up) return reject(closedError());
          this.channels.add(resource);
          resolve();
        },
        this.proc,
      );
    });
  }
  unsubscribe(resource: string): void {
    this.channels.delete(resource);
  }
  async close(): Promise<void> {
    this.closed = true;
    this.channels.clear();
  }

  deliver(resource: string, message: string): void {
    if (!this.up || this.closed || !this.channels.has(resource)) return;
    if (this.faults.dieOnMessage?.()) {
      this.world.log(`${this.proc.name} subscriber dies with the ${resource} release message in flight`);
      this.kill();
      return;
    }
    this.world.after(
      this.world.rng.int(...this.faults.delayMs),
      () => {
        if (this.up && !this.closed && this.channels.has(resource)) this.onRelease(resource, message);
      },
      this.proc,
    );
  }

  kill(): void {
    if (this.closed) return;
    this.up = false;
    this.world.log(`${this.proc.name} subscriber killed`);
    this.world.after(
      this.world.rng.int(...this.faults.reconnectMs),
      () => {
        if (this.closed) return;
        this.up = true;
        this.onResubscribed?.();
      },
      this.proc,
    );
  }
}

/** A LockBackend whose Redis is the model and whose network is the world's. */
export function createSimBackend(opts: {
  world: World;
  proc: SimProcess;
  conn: SimConnection;
  redis: () => ModelRedis;
  faults: Faults;
  subscribers: Set<SimSubscriber>;
  /** As Config.queueLeaseMs of the Locks over it. */
  queueLeaseMs: number;
}): LockBackend & {
  subscriber(): SimSubscriber | undefined;
  ownersRead(key: string, owner: string): Promise<string[]>;
} {
  const { world, proc, conn, redis, faults, subscribers, queueLeaseMs } = opts;
  const queueOf = (resource: string) => ({
    q: `queue:${resource}`,
    qt: `queue-leases:${resource}`,
    qlease: queueLeaseMs,
  });
  const handoffOf = (resource: string, next: NextWaiter | undefined): HandoffArgs => ({
    ...queueOf(resource),
    next: next?.owner ?? "",
    nextLease: next?.leaseMs ?? 0,
    keepMs: next?.keepMs ?? 0,
  });
  /** The release script's run on the model, as both release forms send it. */
  const releaseOp =
    (
      resource: string,
      key: string,
      owner: string,
      leaseMs: number,
      token: number | null,
      next: NextWaiter | undefined,
    ): Op =>
    () =>
      redis().release(
        key,
        channelOf(resource),
        `fence:${resource}`,
        owner,
        leaseMs,
        tokenArg(token),
        handoffOf(resource, next),
      );
  /** A grant to our own next waiter: its reads go out now, after the grant (as the Redis backend does). */
  const withNextReads = async (
    reply: ReleaseReply,
    resource: string,
    key: string,
    next: NextWaiter | undefined,
  ): Promise<ReleaseReply> => {
    if (reply[0] !== 4 || !next?.reads) return reply;
    const lock = { key, fence: `fence:${resource}`, owner: next.owner };
    const sent = withRiders<null>(
      `read ${resource} ${next.owner}`,
      () => null,
      next.reads as never,
      lock,
      true,
    );
    const read = sent.then((s) => s.ride);
    read.catch(() => {});
    return [4, reply[1], read, reply[3]];
  };
  const channelOf = (resource: string) => `ch:${resource}`;
  let sub: SimSubscriber | undefined;
  /** Ops a reads/write function issued, riding with the attempt or release that called it. */
  let riding: Op[] | undefined;
  const facade: SimRedis = {
    fencedRead: (key, fields) =>
      ride(() => redis().fencedRead(current!.key, current!.fence, key, current!.owner, "fence", fields)),
    fencedWrite: (key, token, delta) => ride(() => redis().fencedWrite(key, token, delta)),
  };
  let current: LockKeys | undefined;
  let ridingResults: ((s: Settled) => void)[] = [];
  function ride<T>(op: Op): Promise<T> {
    if (!riding) return Promise.reject(new Error("sim: facade used outside a reads/write call"));
    riding.push(op);
    return new Promise<T>((resolve, reject) => {
      ridingResults.push((s) => (s.ok ? resolve(s.value as T) : reject(s.err)));
    });
  }
  function withRiders<T>(
    label: string,
    main: Op,
    extra: (facade: RedisClient, lock: LockKeys) => unknown,
    lock: LockKeys,
    mainFirst: boolean,
  ): Promise<{ main: T; ride: Promise<unknown> }> {
    riding = [];
    ridingResults = [];
    current = lock;
    let rideResult: unknown;
    try {
      rideResult = extra(facade as unknown as RedisClient, lock);
    } catch (err) {
      rideResult = Promise.reject(err);
    }
    const ops = riding;
    const settleRiders = ridingResults;
    riding = undefined;
    const all = mainFirst ? [main, ...ops] : [...ops, main];
    const sent = conn.send<Settled[]>(all as never, label);
    sent.then(
      (replies) => {
        const rideReplies = mainFirst ? replies.slice(1) : replies.slice(0, -1);
        rideReplies.forEach((r, i) => {
          settleRiders[i]!(r);
        });
      },
      (err) => {
        for (const s of settleRiders) s({ ok: false, err });
      },
    );
    const ridePromise = Promise.resolve(rideResult);
    ridePromise.catch(() => {});
    return sent.then((replies) => ({
      main: unwrap<T>(mainFirst ? replies[0]! : replies[replies.length - 1]!),
      ride: ridePromise,
    }));
  }
  return {
    async acquire(resource, key, owner, leaseMs, more, reads?: ReadsFn, join = false): Promise<AcquireReply> {
      const fence = `fence:${resource}`;
      const op = () => redis().acquire(key, fence, owner, leaseMs, more, { ...queueOf(resource), join });
      if (!reads) {
        const [r] = await conn.send<[Settled]>([op], `acquire ${resource} ${owner}`);
        const v = unwrap<[number, number, number]>(r);
        return v[0] === 1 ? [1, v[1], v[2]] : [0, v[1], v[2]];
      }
      const { main, ride } = await withRiders<[number, number, number]>(
        `acquire+read ${resource} ${owner}`,
        op,
        reads as never,
        { key, fence, owner },
        true,
      );
      return main[0] === 1 ? [1, main[1], main[2], ride] : [0, main[1], main[2]];
    },
    canRead: true,
    handsOver: true,
    async leave(resource, key, owner, successor) {
      const [r] = await conn.send<[Settled]>(
        [
          () =>
            redis().leave(
              key,
              channelOf(resource),
              `fence:${resource}`,
              owner,
              successor?.owner ?? "",
              successor?.leaseMs ?? 0,
              queueOf(resource),
            ),
        ],
        `leave ${resource} ${owner}`,
      );
      const reply = asReleaseReply(unwrap(r));
      return withNextReads(reply, resource, key, successor);
    },
    async renew(key, owner, leaseMs) {
      const [r] = await conn.send<[Settled]>([() => redis().renew(key, owner, leaseMs)], `renew ${owner}`);
      return unwrap<number>(r) === 1;
    },
    async renewMany(items) {
      const replies = await conn.send<Settled[]>(
        items.map((it) => () => redis().renew(it.key, it.owner, it.leaseMs)) as never,
        `renewMany ${items.length}`,
      );
      return replies.map((r) => unwrap<number>(r) === 1);
    },
    async release(resource, key, owner, leaseMs, token, _listener, next): Promise<ReleaseReply> {
      const [r] = await conn.send<[Settled]>(
        [releaseOp(resource, key, owner, leaseMs, token, next)],
        `release ${resource} ${owner}${next ? ` next ${next.owner}${next.keepMs > 0 ? ` keep ${next.keepMs}` : ""}` : ""}`,
      );
      return withNextReads(asReleaseReply(unwrap(r)), resource, key, next);
    },
    releaseAfter<T>(
      write: WriteFn<T>,
      resource: string,
      key: string,
      owner: string,
      leaseMs: number,
      token: number | null,
      _listener?: ReleaseListener,
      next?: NextWaiter,
    ) {
      const op = releaseOp(resource, key, owner, leaseMs, token, next);
      const sent = withRiders<ReleaseReply>(
        `write+release ${resource} ${owner}${next ? ` next ${next.owner}` : ""}`,
        op,
        write as never,
        { key, fence: `fence:${resource}`, owner },
        false,
      );
      const reply = sent.then((s) => withNextReads(asReleaseReply(s.main), resource, key, next));
      const written = sent.then(
        (s) =>
          s.ride.then(
            (value): PromiseSettledResult<T> => ({ status: "fulfilled", value: value as T }),
            (reason: unknown): PromiseSettledResult<T> => ({ status: "rejected", reason }),
          ),
        (reason: unknown): PromiseSettledResult<T> => ({ status: "rejected", reason }),
      );
      return { reply, write: written };
    },
    noReply: (err) => err instanceof Error && /Connection is closed|Command timed out/.test(err.message),
    async list() {
      return [];
    },
    createSubscriber(onRelease, onResubscribed) {
      sub = new SimSubscriber(world, proc, faults, onRelease, onResubscribed);
      subscribers.add(sub);
      return sub;
    },
    async close() {},
    subscriber: () => sub,
    /**
     * A read of the lock's owners sent as the library's `fencedRead` sends its own (redis/fenced.ts): after the
     * release that grants an early hold has been answered. Resolves to the owners Redis named when it ran.
     */
    async ownersRead(key, owner) {
      await namedInStore(key, owner);
      const [r] = await conn.send<[Settled]>([() => redis().owners(key)], `read owners ${key} for ${owner}`);
      return unwrap<string[]>(r);
    },
  };
}

/** As the Redis backend sends it (redis/batch.ts): the decimal token, or "" for none. */
function tokenArg(token: number | null): string {
  return token === null ? "" : String(token);
}

/** The model's release and leave return what the scripts do: [code, value, waited?, others?] (see redis/batch.ts). */
function asReleaseReply(raw: unknown): ReleaseReply {
  const [code, value, waited, others] = raw as [ReleaseReply[0], number, number?, number?];
  return code === 4 ? [4, value, undefined, waited, undefined, others] : ([code, value] as ReleaseReply);
}
