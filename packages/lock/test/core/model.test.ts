import fc from "fast-check";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createLocks,
  type LockHandle,
  type Locks,
  LockTimeoutError,
  type ReleaseResult,
} from "../../src/index.js";
import { assertNoOverlap, connect, type Hold, sleep, uniq } from "../helpers.js";

const RUNS = Number(process.env.MODEL_RUNS ?? 200);
const CLIENTS = 3;
const RESOURCES = 2;

let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

/**
 * The reference: per resource, the owner and its count; per client×resource, the grant token of each of its
 * unreleased handles (in the same order as Real's). A handle whose grant is gone (its key expired, and the same
 * owner was granted the lock afresh since) releases nothing: "not-owner".
 */
interface Model {
  held: ({ client: number; count: number; token: number } | null)[];
  lastToken: number[];
  handles: number[][][];
}
interface Real {
  locks: Locks[];
  owners: string[];
  resources: string[];
  handles: LockHandle[][][];
}

async function checkRedis(m: Model, r: Real): Promise<void> {
  for (let i = 0; i < RESOURCES; i++) {
    const hash = await redis.hgetall(`lock:{${r.resources[i]}}`);
    delete hash["~waiters"];
    const want = m.held[i];
    expect(hash).toEqual(want ? { [r.owners[want.client]!]: String(want.count) } : {});
    if (want) expect(await redis.pttl(`lock:{${r.resources[i]}}`)).toBeGreaterThan(0);
  }
}

class Acquire implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly c: number,
    readonly i: number,
    readonly mode: "try" | "acquire0" | "watchdog",
  ) {}
  check = () => true;
  /** Issues the call; the promise settles with the handle or null. */
  send(r: Real): Promise<LockHandle | null> {
    const opts = { owner: r.owners[this.c]!, leaseMs: this.mode === "watchdog" ? undefined : 5_000 };
    if (this.mode === "acquire0") {
      return r.locks[this.c]!.acquire(r.resources[this.i]!, { ...opts, waitMs: 0 }).catch((e) => {
        expect(e).toBeInstanceOf(LockTimeoutError);
        return null;
      });
    }
    return r.locks[this.c]!.tryAcquire(r.resources[this.i]!, opts);
  }
  /** Checks the answer against the model and advances it. */
  apply(m: Model, r: Real, h: LockHandle | null): void {
    const held = m.held[this.i];
    if (!held) {
      expect(h).not.toBeNull();
      expect(h!.count).toBe(1);
      expect(h!.token).toBeGreaterThan(m.lastToken[this.i]!);
      m.lastToken[this.i] = h!.token!;
      m.held[this.i] = { client: this.c, count: 1, token: h!.token! };
    } else if (held.client === this.c) {
      expect(h).not.toBeNull();
      expect(h!.count).toBe(held.count + 1);
      expect(h!.token).toBe(held.token);
      held.count++;
    } else expect(h).toBeNull();
    if (h) {
      r.handles[this.c]![this.i]!.push(h);
      m.handles[this.c]![this.i]!.push(h.token!);
    }
  }
  async run(m: Model, r: Real): Promise<void> {
    this.apply(m, r, await this.send(r));
    await checkRedis(m, r);
  }
  toString = () => `acquire(c${this.c}, r${this.i}, ${this.mode})`;
}

class Release implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly c: number,
    readonly i: number,
    readonly pick: number,
  ) {}
  check = (m: Readonly<Model>) => m.handles[this.c]![this.i]!.length > 0;
  /** The grant token of the handle the last send() released. */
  private token = 0;
  /** Takes one of the client's handles off the lists (model and real) and releases it. */
  send(m: Model, r: Real): Promise<ReleaseResult> {
    const list = r.handles[this.c]![this.i]!;
    const at = this.pick % list.length;
    const [h] = list.splice(at, 1);
    [this.token] = m.handles[this.c]![this.i]!.splice(at, 1) as [number];
    return h!.release();
  }
  apply(m: Model, result: ReleaseResult): void {
    const held = m.held[this.i];
    if (held && held.client === this.c && held.token === this.token) {
      held.count--;
      expect(result).toBe(held.count > 0 ? "decremented" : "released");
      if (held.count === 0) m.held[this.i] = null;
    } else expect(result).toBe("not-owner");
  }
  async run(m: Model, r: Real): Promise<void> {
    this.apply(m, await this.send(m, r));
    await checkRedis(m, r);
  }
  toString = () => `release(c${this.c}, r${this.i}, #${this.pick})`;
}

class Renew implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly c: number,
    readonly i: number,
  ) {}
  check = (m: Readonly<Model>) => m.handles[this.c]![this.i]!.length > 0;
  async run(m: Model, r: Real): Promise<void> {
    const h = r.handles[this.c]![this.i]!.at(-1)!;
    const wasHeld = h.isHeld();
    const ok = await h.renew();
    // A handle once lost stays lost (renew answers false) even if its owner holds the lock again.
    expect(ok).toBe(wasHeld && m.held[this.i]?.client === this.c);
    await checkRedis(m, r);
  }
  toString = () => `renew(c${this.c}, r${this.i})`;
}

/**
 * Several acquires and releases issued in one tick, so they share batched script calls. Each Locks instance
 * batches its acquires and its releases separately, and the batches leave in the order of their first call,
 * each in call order: that is the order in which Redis runs them, so the model applies them in that order.
 */
class Concurrent implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ops: (Acquire | Release)[]) {}
  check = (m: Readonly<Model>) => {
    const need = new Map<string, number>();
    for (const op of this.ops) {
      if (op instanceof Acquire) continue;
      const k = `${op.c}:${op.i}`;
      need.set(k, (need.get(k) ?? 0) + 1);
    }
    return [...need].every(([k, n]) => {
      const [c, i] = k.split(":").map(Number) as [number, number];
      return m.handles[c]![i]!.length >= n;
    });
  };
  async run(m: Model, r: Real): Promise<void> {
    const batchOf = (op: Acquire | Release) => `${op.c}:${op instanceof Acquire ? "a" : "r"}`;
    const sent = this.ops.map((op) => (op instanceof Acquire ? op.send(r) : op.send(m, r)));
    const answers = await Promise.all(sent as Promise<unknown>[]);
    const order = [...new Set(this.ops.map(batchOf))];
    const byBatch = this.ops
      .map((op, k) => ({ op, k }))
      .sort((x, y) => order.indexOf(batchOf(x.op)) - order.indexOf(batchOf(y.op)) || x.k - y.k);
    for (const { op, k } of byBatch) {
      if (op instanceof Acquire) op.apply(m, r, answers[k] as LockHandle | null);
      else op.apply(m, answers[k] as ReleaseResult);
    }
    await checkRedis(m, r);
  }
  toString = () => `together(${this.ops.map(String).join(", ")})`;
}

/** The lease runs out: the TTL is cut to 1 ms and Redis expires the key itself. */
class Expire implements fc.AsyncCommand<Model, Real> {
  constructor(readonly i: number) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const key = `lock:{${r.resources[this.i]}}`;
    await redis.pexpire(key, 1);
    await sleep(3);
    expect(await redis.exists(key)).toBe(0);
    m.held[this.i] = null;
    await checkRedis(m, r);
  }
  toString = () => `expire(r${this.i})`;
}

const client = fc.integer({ min: 0, max: CLIENTS - 1 });
const res = fc.integer({ min: 0, max: RESOURCES - 1 });
const acquireCmd = fc
  .tuple(client, res, fc.constantFrom("try", "acquire0", "watchdog") as fc.Arbitrary<Acquire["mode"]>)
  .map(([c, i, mode]) => new Acquire(c, i, mode));
const releaseCmd = fc.tuple(client, res, fc.nat(5)).map(([c, i, p]) => new Release(c, i, p));
/** The same operation on `like`'s client and resource. */
function onLock(op: Acquire | Release, like: Acquire | Release): Acquire | Release {
  return op instanceof Acquire ? new Acquire(like.c, like.i, op.mode) : new Release(like.c, like.i, op.pick);
}

const commands = fc.commands(
  [
    acquireCmd,
    releaseCmd,
    // Half the groups hit one client's one lock, where order inside a batch decides the answers.
    fc
      .tuple(fc.array(fc.oneof(acquireCmd, releaseCmd), { minLength: 2, maxLength: 6 }), fc.boolean())
      .map(([ops, oneLock]) => new Concurrent(oneLock ? ops.map((op) => onLock(op, ops[0]!)) : ops)),
    fc.tuple(client, res).map(([c, i]) => new Renew(c, i)),
    res.map((i) => new Expire(i)),
  ],
  { maxCommands: 30 },
);

describe("model-based", () => {
  it(`matches an owner+count reference over ${RUNS} generated sequences`, { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const base = uniq("model");
        const locks = Array.from({ length: CLIENTS }, (_, c) =>
          createLocks({ redis, instanceId: `client${c}`, leaseMs: 5_000 }),
        );
        const real: Real = {
          locks,
          owners: locks.map((_, c) => `client${c}:${base}`),
          resources: Array.from({ length: RESOURCES }, (_, i) => `${base}.r${i}`),
          handles: locks.map(() => Array.from({ length: RESOURCES }, () => [])),
        };
        const model: Model = {
          held: Array(RESOURCES).fill(null),
          lastToken: Array(RESOURCES).fill(0),
          handles: locks.map(() => Array.from({ length: RESOURCES }, () => [] as number[])),
        };
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
        } finally {
          await Promise.all(locks.map((l) => l.close()));
          await redis.del(...real.resources.map((r) => `lock:{${r}}`));
        }
      }),
      { numRuns: RUNS, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) },
    );
  });

  it("no two holders: 4 instances, 160 tasks over 3 resources with re-entry, holds never overlap", async () => {
    const conns = Array.from({ length: 4 }, () => connect());
    const all = conns.map((c, n) => createLocks({ redis: c, instanceId: `node${n}`, leaseMs: 2_000 }));
    const resources = [0, 1, 2].map(() => uniq("holders"));
    const holds: Hold[][] = resources.map(() => []);
    await Promise.all(
      Array.from({ length: 160 }, async (_, t) => {
        const locks = all[t % 4]!;
        const i = Math.floor(Math.random() * 3);
        await sleep(Math.random() * 20);
        await locks.withLock(
          resources[i]!,
          async (h) => {
            const start = performance.now();
            if (Math.random() < 0.3) {
              await locks.withLock(resources[i]!, async (inner) => expect(inner.owner).toBe(h.owner));
            }
            await sleep(Math.random() * 2);
            holds[i]!.push({ owner: h.owner, start, end: performance.now() });
          },
          { waitMs: 20_000 },
        );
      }),
    );
    expect(holds.flat()).toHaveLength(160);
    for (const h of holds) assertNoOverlap(h);
    await Promise.all(all.map((l) => l.close()));
    for (const c of conns) c.disconnect();
  });
});
