import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  createLocks,
  createRedlock,
  fenceKey,
  type LockHandle,
  type Locks,
  type LocksOptions,
  lockKey,
  releaseChannel,
} from "../../src/index.js";
import { keySlot } from "../../src/redis/slot.js";
import { decodeResource, encodeResource, resourceOfChannel, resourceOfKey } from "../../src/resource.js";
import { connect, sleep } from "../helpers.js";
import { NAMES } from "../names.js";
import { type Nodes, startNodes } from "../redlock-helpers.js";

let redis: Redis;
const open: Locks[] = [];
const conns: Redis[] = [];
/** A Locks on a connection of its own, under a prefix of its own so list() sees only this test's locks. */
const make = (prefix: string, opts: Partial<LocksOptions> = {}) => {
  const c = connect();
  conns.push(c);
  const l = createLocks({ redis: c, prefix, leaseMs: 2_000, ...opts });
  open.push(l);
  return l;
};
const fresh = () => `t${Math.random().toString(36).slice(2, 10)}:`;
// Fallback retries only every 5 s: within a 2 s wait a waiter gets the lock only if a release wakes it.
const deaf = { retry: { minMs: 5_000, maxMs: 5_000, jitterMs: 0 } };

beforeAll(() => {
  redis = connect();
});
afterAll(async () => {
  for (const l of open) await l.close();
  for (const c of conns) c.disconnect();
  redis.disconnect();
});

describe("key encoding", () => {
  it("round-trips every name and keeps its keys and channel in one slot", () => {
    for (const name of NAMES) {
      const e = encodeResource(name);
      expect(e).not.toMatch(/[{}]/);
      expect(decodeResource(e)).toBe(name);
      for (const prefix of ["lock:", "app1:"]) {
        const key = lockKey(prefix, name);
        expect(resourceOfKey(prefix, key)).toBe(name);
        expect(resourceOfChannel(prefix, releaseChannel(name, prefix))).toBe(name);
        const slot = keySlot(key);
        expect(keySlot(fenceKey(name, prefix))).toBe(slot);
        expect(keySlot(releaseChannel(name, prefix))).toBe(slot);
      }
    }
    expect(lockKey("lock:", "tenant:{acme}:job")).toBe("lock:{tenant:%7Bacme%7D:job}");
    expect(lockKey("lock:", "100%")).toBe("lock:{100%25}");
    expect(lockKey("lock:", "order 1001")).toBe("lock:{order 1001}");
  });

  it("keeps DESIGN §2 names under the default prefix and puts every key under any other prefix", () => {
    expect([lockKey("lock:", "r"), fenceKey("r"), releaseChannel("r")]).toEqual([
      "lock:{r}",
      "fence:{r}",
      "lock-released:{r}",
    ]);
    expect([lockKey("app1:", "r"), fenceKey("r", "app1:"), releaseChannel("r", "app1:")]).toEqual([
      "app1:{r}",
      "app1:fence:{r}",
      "app1:lock-released:{r}",
    ]);
  });

  it("reads no name from keys it never writes", () => {
    for (const key of [
      "lock:{a{b}",
      "lock:{a}b}",
      "lock:{}",
      "lock:{a%7b}",
      "lock:{a%}",
      "lock:{%41}",
      "lock:x",
    ])
      expect(resourceOfKey("lock:", key), key).toBeNull();
  });
});

describe("names on a standalone Redis", () => {
  it("acquires, fences, excludes and releases every name", async () => {
    const prefix = fresh();
    const a = make(prefix);
    const b = make(prefix);
    for (const name of NAMES) {
      const h = await a.acquire(name);
      expect(h.resource).toBe(name);
      expect(h.key).toBe(lockKey(prefix, name));
      expect(await redis.hget(h.key, h.owner)).toBe("1");
      expect(await redis.get(`${prefix}fence:{${encodeResource(name)}}`)).toBe(String(h.token));
      expect(await b.tryAcquire(name)).toBeNull();
      expect(await h.release()).toBe("released");
      expect(await redis.exists(h.key)).toBe(0);
      const again = await b.acquire(name);
      expect(again.token).toBeGreaterThan(h.token!);
      await again.release();
    }
  });

  it("wakes a waiter of another Locks instance when the holder releases, for every name", async () => {
    const prefix = fresh();
    const holder = make(prefix);
    const waiter = make(prefix, deaf);
    const held = await Promise.all(NAMES.map((n) => holder.acquire(n)));
    const start = performance.now();
    const waiting = NAMES.map((n) => waiter.acquire(n, { waitMs: 2_000 }));
    await sleep(150);
    await Promise.all(held.map((h) => h.release()));
    const got = await Promise.all(waiting);
    expect(performance.now() - start).toBeLessThan(2_000);
    expect(got.map((h) => h.resource)).toEqual(NAMES);
    await Promise.all(got.map((h) => h.release()));
  });

  it("list() shows every name as given; a match on names escapes glob characters", async () => {
    const prefix = fresh();
    const locks = make(prefix);
    const extra = ["axb", "a[1]b", "a{b", "a%7Bb", "aéb", "a\\b"];
    const all = [...NAMES, ...extra];
    const handles = await Promise.all(all.map((n) => locks.acquire(n)));
    const names = async (match?: string) =>
      (await locks.list(match === undefined ? {} : { match })).map((l) => l.resource).sort();
    try {
      const listed = await locks.list();
      expect(listed.map((l) => l.resource).sort()).toEqual([...all].sort());
      for (const l of listed) expect(l.key).toBe(lockKey(prefix, l.resource));
      expect(await names("tenant:{acme}*")).toEqual(["tenant:{acme}:job"]);
      expect(await names("*@example.com")).toEqual(["user:alice@example.com"]);
      expect(await names("订单:*")).toEqual(["订单:1001"]);
      expect(await names("files/*/report.pdf")).toEqual(["files/2026/report.pdf"]);
      expect(await names("order ????")).toEqual(["order 1001"]);
      // `?` is one character of the name, however many bytes of the key it takes (é, %7B).
      expect(await names("a?b")).toEqual(["a*b", "a\\b", "a{b", "axb", "aéb"].sort());
      expect(await names("a\\*b")).toEqual(["a*b"]);
      expect(await names("a*b")).toEqual(["a%7Bb", "a*b", "a[1]b", "a\\b", "a{b", "axb", "aéb"].sort());
      expect(await names("a\\[1]b")).toEqual(["a[1]b"]);
      expect(await names("a[x*]b")).toEqual(["a*b", "axb"].sort());
      expect(await names("a[^x*]b")).toEqual(["a\\b", "a{b", "aéb"].sort());
      expect(await names("a\\\\b")).toEqual(["a\\b"]);
      expect(await names("a{b")).toEqual(["a{b"]);
      expect(await names("a%7Bb")).toEqual(["a%7Bb"]);
      expect(await names("%7B")).toEqual(["%7B"]);
      expect(await names("100%")).toEqual(["100%"]);
      expect(await names("q\\?")).toEqual(["q?"]);
      expect(await names("\\[x]")).toEqual(["[x]"]);
      expect(await names("{")).toEqual(["{"]);
    } finally {
      await Promise.all(handles.map((h) => h.release()));
    }
  });

  it("list() skips keys under the prefix that it never wrote", async () => {
    const prefix = fresh();
    const locks = make(prefix);
    for (const k of ["{a{b}", "{a}b}", "{a%zz}", "{}"]) await redis.hset(`${prefix}${k}`, "o", "1");
    const h = await locks.acquire("ok");
    try {
      expect((await locks.list()).map((l) => l.resource)).toEqual(["ok"]);
    } finally {
      await h.release();
    }
  });
});

describe("prefix", () => {
  it("two apps with different prefixes share no lock, fence counter or release channel", async () => {
    const name = `tenant:{acme}:job ${Math.random()}`;
    const e = encodeResource(name);
    const apps = ["appA:", "appB:", "lock:"];
    const channels = [`appA:lock-released:{${e}}`, `appB:lock-released:{${e}}`, `lock-released:{${e}}`];
    const holders = apps.map((p) => make(p));
    const waiters = apps.map((p) => make(p, deaf));
    const sub = connect();
    conns.push(sub);
    const heard: string[] = [];
    // A handoff goes to `<release channel>:<instance id>`: counted as its app's channel.
    sub.on("pmessage", (_p, channel: string) => heard.push(channel.slice(0, channel.lastIndexOf("}") + 1)));
    await sub.psubscribe(`*lock-released:{${e}}*`);

    // All three hold the same name at once, each with a counter of its own: B's and the default's are set
    // far ahead of the clock-based tokens, and A's token ignores both.
    await redis.set(`appB:fence:{${e}}`, "8000000000000000");
    await redis.set(`fence:{${e}}`, "7000000000000000");
    const held = await Promise.all(holders.map((l) => l.acquire(name)));
    expect(held[0]!.token).toBeLessThan(7e15);
    expect(held.slice(1).map((h) => h.token)).toEqual([8e15 + 1, 7e15 + 1]);
    expect(await redis.mget(`appA:fence:{${e}}`, `appB:fence:{${e}}`, `fence:{${e}}`)).toEqual(
      held.map((h) => String(h.token)),
    );
    expect((await holders[0]!.list()).map((l) => [l.key, l.resource])).toEqual([[`appA:{${e}}`, name]]);

    const got: (LockHandle | undefined)[] = [undefined, undefined, undefined];
    const waiting = waiters.map((l, i) =>
      l.acquire(name, { waitMs: 3_000 }).then((h) => {
        got[i] = h;
        return h;
      }),
    );
    await sleep(150);
    // Each release publishes on its own app's channel and wakes that app's waiter only.
    for (const [n, i] of [0, 2, 1].entries()) {
      expect(await held[i]!.release()).toBe("released");
      const w = await waiting[i]!;
      expect(w.token).toBeGreaterThan(held[i]!.token!);
      // The observer's connection may hear the message after the waiter's lock arrives.
      for (let t = 0; heard.length <= n && t < 100; t++) await sleep(10);
      expect(heard.at(-1)).toBe(channels[i]);
      for (const j of [0, 1, 2])
        expect(got[j] !== undefined, `app ${j} after release ${i}`).toBe(heard.includes(channels[j]!));
    }
    expect([...heard].sort()).toEqual([...channels].sort());
    await Promise.all(got.map((h) => h!.release()));
  });

  it("refuses a prefix whose lock key could be another key of ours, and ioredis keyPrefix", () => {
    for (const prefix of ["fence:", "app:fence:", "a{", "a}", "a*", "", "x".repeat(65)])
      expect(() => createLocks({ redis, prefix }), prefix).toThrow(/invalid option prefix/);
    const lazy = (keyPrefix?: string) =>
      new Redis(inject("redisUrl"), { lazyConnect: true, ...(keyPrefix ? { keyPrefix } : {}) });
    const [prefixed, plain] = [lazy("app1:"), lazy()];
    expect(() => createLocks({ redis: prefixed })).toThrow(
      /redis\.options\.keyPrefix.*use the Lockyard `prefix`/,
    );
    expect(() => createRedlock({ clients: [redis, prefixed, plain] })).toThrow(
      /clients\[1\]\.options\.keyPrefix/,
    );
    // Nothing was sent: the refusal comes before any Redis call.
    expect([prefixed.status, plain.status]).toEqual(["wait", "wait"]);
  });
});

describe("names on Redlock", () => {
  let nodes: Nodes;
  beforeAll(async () => {
    nodes = await startNodes(3);
  });
  afterAll(async () => {
    await nodes?.close();
  });

  it("acquires every name under a prefix, wakes another instance's waiter, lists names as given", async () => {
    const a = createRedlock({ clients: nodes.clients, prefix: "rl:", leaseMs: 2_000 });
    const b = createRedlock({ clients: nodes.clients, prefix: "rl:", leaseMs: 2_000, ...deaf });
    open.push(a, b);
    const held = await Promise.all(NAMES.map((n) => a.acquire(n)));
    for (const h of held)
      expect(await nodes.clients[0]!.hget(`rl:{${encodeResource(h.resource)}}`, h.owner)).toBe("1");
    expect((await a.list()).map((l) => l.resource).sort()).toEqual([...NAMES].sort());
    expect((await a.list({ match: "tenant:\\{*" })).map((l) => l.resource)).toEqual(["tenant:{acme}:job"]);
    const waiting = NAMES.map((n) => b.acquire(n, { waitMs: 2_000 }));
    await sleep(150);
    await Promise.all(held.map((h) => h.release()));
    const got = await Promise.all(waiting);
    expect(got.map((h) => h.resource)).toEqual(NAMES);
    await Promise.all(got.map((h) => h.release()));
  });
});
