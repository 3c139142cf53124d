import fc from "fast-check";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocks, type LockHandle, type Locks, LockTimeoutError } from "../src/index.js";
import { assertNoOverlap, connect, type Hold, sleep, uniq } from "./helpers.js";

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

/** The reference: per resource, the owner and its count; per client×resource, its unreleased handles. */
interface Model {
  held: ({ client: number; count: number; token: number } | null)[];
  lastToken: number[];
  handles: number[][];
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
  async run(m: Model, r: Real): Promise<void> {
    const opts = { owner: r.owners[this.c]!, leaseMs: this.mode === "watchdog" ? undefined : 5_000 };
    let h: LockHandle | null;
    if (this.mode === "acquire0") {
      h = await r.locks[this.c]!.acquire(r.resources[this.i]!, { ...opts, waitMs: 0 }).catch((e) => {
        expect(e).toBeInstanceOf(LockTimeoutError);
        return null;
      });
    } else h = await r.locks[this.c]!.tryAcquire(r.resources[this.i]!, opts);
    const held = m.held[this.i];
    if (!held) {
      expect(h).not.toBeNull();
      expect(h!.count).toBe(1);
      expect(h!.token).toBe(m.lastToken[this.i]! + 1);
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
      m.handles[this.c]![this.i]!++;
    }
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
  check = (m: Readonly<Model>) => m.handles[this.c]![this.i]! > 0;
  async run(m: Model, r: Real): Promise<void> {
    const list = r.handles[this.c]![this.i]!;
    const [h] = list.splice(this.pick % list.length, 1);
    m.handles[this.c]![this.i]!--;
    const result = await h!.release();
    const held = m.held[this.i];
    if (held && held.client === this.c) {
      held.count--;
      expect(result).toBe(held.count > 0 ? "decremented" : "released");
      if (held.count === 0) m.held[this.i] = null;
    } else expect(result).toBe("not-owner");
    await checkRedis(m, r);
  }
  toString = () => `release(c${this.c}, r${this.i}, #${this.pick})`;
}

class Renew implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly c: number,
    readonly i: number,
  ) {}
  check = (m: Readonly<Model>) => m.handles[this.c]![this.i]! > 0;
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
const commands = fc.commands(
  [
    fc
      .tuple(client, res, fc.constantFrom("try", "acquire0", "watchdog") as fc.Arbitrary<Acquire["mode"]>)
      .map(([c, i, mode]) => new Acquire(c, i, mode)),
    fc.tuple(client, res, fc.nat(5)).map(([c, i, p]) => new Release(c, i, p)),
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
          handles: locks.map(() => Array(RESOURCES).fill(0)),
        };
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
        } finally {
          await Promise.all(locks.map((l) => l.close()));
          await redis.del(...real.resources.map((r) => `lock:{${r}}`));
        }
      }),
      { numRuns: RUNS },
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
