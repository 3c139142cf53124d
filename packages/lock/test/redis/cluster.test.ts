import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startCluster } from "../../../../scripts/lib/cluster.mjs";
import {
  createLocks,
  fencedWrite,
  fenceKey,
  type LockHandle,
  lockKey,
  type RedisLocks,
  ReplyLostError,
  releaseChannel,
} from "../../src/index.js";
import { keySlot } from "../../src/redis/slot.js";
import { assertNoOverlap, type Hold, sleep, uniq } from "../helpers.js";
import { NAMES } from "../names.js";

interface TestCluster {
  nodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

let cluster: TestCluster;
let redis: Cluster;
let locks: RedisLocks;

/** The master (host:port) serving a key's slot, from the client's own slot map. */
const masterOf = (key: string): string => redis.slots[keySlot(key)]![0]!;

/** `count` resources per master, so every test touches every node of the cluster. */
function spread(name: string, perMaster: number): string[] {
  const byMaster = new Map<string, string[]>();
  while ([...byMaster.values()].filter((rs) => rs.length >= perMaster).length < cluster.nodes.length) {
    const r = uniq(name);
    const m = masterOf(`lock:{${r}}`);
    const rs = byMaster.get(m) ?? [];
    if (rs.length < perMaster) rs.push(r);
    byMaster.set(m, rs);
  }
  return [...byMaster.values()].flat();
}

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 });
  redis = new Cluster(cluster.nodes, { redisOptions: { connectTimeout: 1_000 } });
  redis.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    redis.once("ready", () => resolve());
    redis.once("end", () => reject(new Error("cluster client ended")));
  });
  locks = createLocks({ redis, leaseMs: 600, waitMs: 3_000 });
}, 60_000);

afterAll(async () => {
  await locks?.close();
  redis?.disconnect();
  await cluster?.stop();
});

describe("Redis Cluster (3 masters)", () => {
  it("keeps lock:, fence: and the release channel of a resource in one slot", () => {
    for (const r of spread("cl.slot", 3)) {
      const slot = keySlot(`lock:{${r}}`);
      expect(keySlot(`fence:{${r}}`)).toBe(slot);
      expect(keySlot(`lock-released:{${r}}`)).toBe(slot);
    }
  });

  it("acquires, re-enters, releases and fences on resources over every master", async () => {
    const resources = spread("cl.basic", 4);
    expect(new Set(resources.map((r) => masterOf(`lock:{${r}}`))).size).toBe(3);
    await Promise.all(
      resources.map(async (r) => {
        const h = await locks.acquire(r);
        expect(h.token).toBeGreaterThan(0);
        const inner = await locks.acquire(r, { owner: h.owner });
        expect([inner.count, inner.token]).toEqual([2, h.token]);
        expect(await locks.tryAcquire(r)).toBeNull();
        expect(await inner.release()).toBe("decremented");
        expect(await h.release()).toBe("released");
        expect(await redis.exists(`lock:{${r}}`)).toBe(0);

        const next = await locks.acquire(r);
        expect(next.token).toBeGreaterThan(h.token!);
        // The stock key shares the resource's hash tag, so the guarded write lands on the same master.
        expect(await fencedWrite(redis, `stock:{${r}}`, next.token!, 5)).toEqual({ ok: true, qty: 5 });
        expect(await fencedWrite(redis, `stock:{${r}}`, h.token!, -1)).toEqual({
          ok: false,
          reason: "STALE",
          fence: next.token,
        });
        await next.release();
      }),
    );
  });

  it("renews watchdog locks on every master (one batched call per slot)", async () => {
    const resources = spread("cl.watchdog", 2);
    const wd = createLocks({ redis, leaseMs: 300 });
    try {
      const handles = await Promise.all(resources.map((r) => wd.acquire(r)));
      await sleep(900);
      for (const h of handles) expect(h.isHeld()).toBe(true);
      for (const r of resources) expect(await redis.pttl(`lock:{${r}}`)).toBeGreaterThan(0);
      for (const h of handles) expect(await h.release()).toBe("released");
    } finally {
      await wd.close();
    }
  });

  it("wakes waiters through SSUBSCRIBE/SPUBLISH on every master", async () => {
    // Fallback retries only every 5 s: within the 2 s wait a waiter gets the lock only if woken.
    const waiters = createLocks({ redis, retry: { minMs: 5_000, maxMs: 5_000, jitterMs: 0 } });
    try {
      const resources = spread("cl.wake", 1);
      const held = await Promise.all(resources.map((r) => locks.acquire(r)));
      const waiting = resources.map((r) => waiters.acquire(r, { waitMs: 2_000 }));
      await sleep(150);
      await Promise.all(held.map((h) => h.release()));
      const got: LockHandle[] = await Promise.all(waiting);
      for (const h of got) expect(await h.release()).toBe("released");
    } finally {
      await waiters.close();
    }
  });

  it("list() sees locks on every master", async () => {
    const prefix = uniq("cl.list");
    const resources = spread(prefix, 2);
    const handles = await Promise.all(resources.map((r) => locks.acquire(r)));
    try {
      const listed = await locks.list({ match: `${prefix}*` });
      expect(listed.map((l) => l.resource).sort()).toEqual([...resources].sort());
      expect(new Set(listed.map((l) => masterOf(l.key))).size).toBe(3);
      for (const l of listed) {
        const h = handles.find((x) => x.resource === l.resource)!;
        expect(l).toMatchObject({ owners: [{ owner: h.owner, count: 1 }], token: h.token, leaseMs: 600 });
      }
    } finally {
      await Promise.all(handles.map((h) => h.release()));
    }
  });

  it("keeps holds of different owners apart under 60 concurrent tasks per master", async () => {
    const resources = spread("cl.mutex", 1);
    const other = createLocks({ redis, waitMs: 20_000 });
    try {
      await Promise.all(
        resources.map(async (r) => {
          const holds: Hold[] = [];
          await Promise.all(
            Array.from({ length: 60 }, (_, i) =>
              (i % 2 ? locks : other).withLock(
                r,
                async (lock) => {
                  const start = performance.now();
                  await sleep(1);
                  holds.push({ owner: lock.owner, start, end: performance.now() });
                },
                { waitMs: 20_000 },
              ),
            ),
          );
          expect(holds).toHaveLength(60);
          assertNoOverlap(holds);
        }),
      );
    } finally {
      await other.close();
    }
  });

  it("batches one tick's acquires and releases per slot: one script call per slot, not per lock", async () => {
    // Resources sharing a slot (8 in each of two slots) and 4 in slots of their own.
    const sameSlot = (seed: string, n: number) => {
      const slot = keySlot(`lock:{${seed}}`);
      const out = [seed];
      for (let i = 0; out.length < n; i++) {
        const r = `${seed}.${i}`;
        if (keySlot(`lock:{${r}}`) === slot) out.push(r);
      }
      return out;
    };
    const groups = [sameSlot(uniq("cl.batch"), 8), sameSlot(uniq("cl.batch"), 8)];
    const loners = spread("cl.alone", 2).slice(0, 4);
    const slots = new Set([...groups.flat(), ...loners].map((r) => keySlot(`lock:{${r}}`)));
    const masters = redis.nodes("master");
    const calls = async () => {
      let n = 0;
      for (const m of masters) {
        const info = await m.info("commandstats");
        for (const c of ["evalsha", "eval"])
          n += Number(info.match(new RegExp(`cmdstat_${c}:calls=(\\d+)`))?.[1] ?? 0);
      }
      return n;
    };
    const before = await calls();
    const handles = await Promise.all([...groups.flat(), ...loners].map((r) => locks.acquire(r)));
    const mid = await calls();
    expect(mid - before).toBe(slots.size);
    for (const h of handles) expect(h.count).toBe(1);
    expect(await Promise.all(handles.map((h) => h.release()))).toEqual(
      Array(handles.length).fill("released"),
    );
    expect((await calls()) - mid).toBe(slots.size);
  });

  describe("names with braces, spaces, globs, % and non-ASCII", () => {
    const prefixes = ["lock:", "cl.app:"];
    // One run's names: the shared ones, each made unique so reruns on one cluster never meet.
    const tag = Math.random().toString(36).slice(2, 8);
    const names = NAMES.map((n) => `${n} ${tag}`);

    it("puts every key and the channel of a lock in one slot, as the servers compute it", async () => {
      const node = redis.nodes("master")[0]!;
      for (const prefix of prefixes) {
        for (const name of names) {
          const keys = [lockKey(prefix, name), fenceKey(name, prefix), releaseChannel(name, prefix)];
          const slots = await Promise.all(keys.map((k) => node.cluster("KEYSLOT", k)));
          expect(new Set(slots).size, keys.join(" ")).toBe(1);
          expect(slots[0]).toBe(keySlot(keys[0]!));
        }
      }
      // The names land on every master, so what follows exercises all of them.
      expect(new Set(names.map((n) => masterOf(lockKey("lock:", n)))).size).toBe(3);
    });

    it.each(prefixes)(
      "acquires, excludes, wakes another instance's waiter and lists names as given (prefix %s)",
      async (prefix) => {
        const a = createLocks({ redis, prefix, leaseMs: 2_000 });
        // Fallback retries only every 5 s: within the 2 s wait a waiter gets the lock only if woken.
        const b = createLocks({
          redis,
          prefix,
          leaseMs: 2_000,
          retry: { minMs: 5_000, maxMs: 5_000, jitterMs: 0 },
        });
        try {
          const held = await Promise.all(names.map((n) => a.acquire(n)));
          for (const h of held) {
            expect(h.key).toBe(lockKey(prefix, h.resource));
            expect(await redis.hget(h.key, h.owner)).toBe("1");
            expect(await redis.get(fenceKey(h.resource, prefix))).toBe(String(h.token));
          }
          expect(await b.tryAcquire(names[0]!)).toBeNull();
          const listed = await a.list({ match: `* ${tag}` });
          expect(listed.map((l) => l.resource).sort()).toEqual([...names].sort());
          expect(new Set(listed.map((l) => masterOf(l.key))).size).toBe(3);
          expect((await a.list({ match: `tenant:{acme}:job ${tag}` })).map((l) => l.resource)).toEqual([
            `tenant:{acme}:job ${tag}`,
          ]);
          expect((await a.list({ match: `a\\*b ${tag}` })).map((l) => l.resource)).toEqual([`a*b ${tag}`]);
          expect((await a.list({ match: `订单:* ${tag}` })).map((l) => l.resource)).toEqual([
            `订单:1001 ${tag}`,
          ]);

          const waiting = names.map((n) => b.acquire(n, { waitMs: 2_000 }));
          await sleep(150);
          await Promise.all(held.map((h) => h.release()));
          const got = await Promise.all(waiting);
          expect(got.map((h) => h.resource)).toEqual(names);
          for (const [i, h] of got.entries()) expect(h.token).toBeGreaterThan(held[i]!.token!);
          expect(await Promise.all(got.map((h) => h.release()))).toEqual(names.map(() => "released"));
        } finally {
          await a.close();
          await b.close();
        }
      },
    );
  });
});

describe("semaphores, read-write locks and multi-resource locks on the Cluster", () => {
  /** `count` resources per master for keys under `kindPrefix` (the kinds' keys hash on the same tag). */
  const spreadKind = (name: string) => spread(name, 1);

  it("keeps a semaphore's and a read-write lock's hash, fence and channel in the name's slot", () => {
    for (const r of NAMES) {
      const slot = keySlot(lockKey("lock:", r));
      for (const kind of ["semaphore:", "rw:"]) {
        const prefix = `lock:${kind}`;
        expect(keySlot(lockKey(prefix, r))).toBe(slot);
        expect(keySlot(fenceKey(r, prefix))).toBe(slot);
        expect(keySlot(releaseChannel(r, prefix))).toBe(slot);
      }
    }
  });

  it("a 2-permit semaphore on every master: never more than 2 inside, waiters woken by SPUBLISH", async () => {
    // Fallback retries only every 5 s, holds of 30 ms: 12 callers finish within the wait only if woken.
    const other = createLocks({ redis, retry: { minMs: 5_000, maxMs: 5_000, jitterMs: 0 } });
    try {
      await Promise.all(
        spreadKind("cl.sem").map(async (r) => {
          let inside = 0;
          let most = 0;
          await Promise.all(
            Array.from({ length: 12 }, (_, i) =>
              (i % 2 ? locks : other).semaphore(r, 2).withLock(
                async () => {
                  most = Math.max(most, ++inside);
                  await sleep(30);
                  inside--;
                },
                { waitMs: 4_000 },
              ),
            ),
          );
          expect(most).toBe(2);
        }),
      );
    } finally {
      await other.close();
    }
  });

  it("a read-write lock on every master: the writer alone, readers together, a release wakes the other side", async () => {
    const other = createLocks({ redis, retry: { minMs: 5_000, maxMs: 5_000, jitterMs: 0 } });
    try {
      for (const r of spreadKind("cl.rw")) {
        const w = await locks.readWrite(r).write.acquire();
        const readers = Array.from({ length: 3 }, () => other.readWrite(r).read.acquire({ waitMs: 2_000 }));
        await sleep(100);
        expect(await locks.readWrite(r).read.tryAcquire()).toBeNull();
        await w.release();
        const got = await Promise.all(readers);
        expect(new Set(got.map((h) => h.owner)).size).toBe(3);
        expect(await locks.readWrite(r).write.tryAcquire()).toBeNull();
        await Promise.all(got.map((h) => h.release()));
      }
    } finally {
      await other.close();
    }
  });

  it("multi-resource locks across masters: opposite orders never deadlock, each lock held by one at a time", async () => {
    const other = createLocks({ redis, waitMs: 8_000 });
    try {
      const rs = spreadKind("cl.multi");
      expect(new Set(rs.map((r) => masterOf(`lock:{${r}}`))).size).toBe(cluster.nodes.length);
      const holds: Hold[] = [];
      await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          (i % 2 ? locks : other).withLock(
            i % 4 < 2 ? rs : [...rs].reverse(),
            async (m) => {
              const start = performance.now();
              await sleep(3);
              holds.push({ owner: m.handles[0]!.owner, start, end: performance.now() });
            },
            { waitMs: 8_000 },
          ),
        ),
      );
      expect(holds).toHaveLength(24);
      assertNoOverlap(holds);
    } finally {
      await other.close();
    }
  });
});

describe("a reply lost with a node's connection on the Cluster", () => {
  /** Keeps a node busy for ARGV[1] ms: what it is sent meanwhile waits unread in its socket. */
  const BUSY = `local s = redis.call('time')
local start = tonumber(s[1]) * 1000000 + tonumber(s[2])
repeat local t = redis.call('time') until tonumber(t[1]) * 1000000 + tonumber(t[2]) - start >= tonumber(ARGV[1]) * 1000
return 1`;

  it("a re-entered release is not sent again when the node's connection comes back: the outer hold stays", async () => {
    const res = uniq("cluster-resend");
    const key = `lock:{${res}}`;
    const outer = await locks.acquire(res, { leaseMs: 5_000 });
    const inner = await locks.acquire(res, { owner: outer.owner });
    const [host, port] = masterOf(key).split(":");
    const direct = new Redis(Number(port), host!);
    const other = createLocks({ redis });
    try {
      await direct.ping();
      const busy = direct.eval(BUSY, 0, 400);
      await sleep(50);
      const releasing = inner.release().then(
        (v) => v,
        (e: unknown) => e,
      );
      await sleep(50);
      // The release sits in the node's socket, unread; the connection drops. Redis runs it once the script
      // ends (its reply goes nowhere); the Cluster sends a command whose connection closed to the slot's node
      // again, on a new connection.
      const node = redis.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === masterOf(key));
      (node as unknown as { stream: { destroy(): void } }).stream.destroy();
      await busy;
      expect(await releasing).toBeInstanceOf(ReplyLostError);
      // The Cluster connects to that node afresh (its node connections never reconnect by themselves).
      await vi.waitFor(async () => expect(await redis.exists(key)).toBe(1), { timeout: 5_000 });
      await sleep(100);
      expect(await other.tryAcquire(res)).toBeNull();
      expect(await direct.hget(key, outer.owner)).toBe("1");
      expect(await outer.release()).toBe("released");
    } finally {
      await other.close();
      direct.disconnect();
    }
  });

  it("a script answered MOVED is still redirected: the guard forgets a command once Redis answered it", async () => {
    const res = uniq("cluster-moved");
    const key = `lock:{${res}}`;
    const slot = keySlot(key);
    const owner = masterOf(key);
    const wrong = redis.nodes("master").find((n) => `${n.options.host}:${n.options.port}` !== owner)!;
    const slots = redis.slots as string[][];
    const before = slots[slot];
    // A stale slot map, as after a resharding: the script goes to a master that answers MOVED.
    slots[slot] = [`${wrong.options.host}:${wrong.options.port}`];
    try {
      const h = await locks.acquire(res);
      expect(h.count).toBe(1);
      expect(masterOf(key)).toBe(owner);
      expect(await h.release()).toBe("released");
      expect(await redis.exists(key)).toBe(0);
    } finally {
      if (masterOf(key) !== owner) slots[slot] = before!;
    }
  });
});
