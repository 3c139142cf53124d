import { Cluster, Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import {
  createLocks,
  createRedlock,
  InvalidOptionError,
  InvalidResourceError,
  isValidResource,
  LockError,
  LockLostError,
  LockNotOwnedError,
  LockReleasedError,
  LocksClosedError,
  LockTimeoutError,
  QuorumError,
} from "../../src/index.js";
import { connect, uniq } from "../helpers.js";

// A client that never connects: if any call reached it, its status would leave "wait".
const idle = new Redis({ lazyConnect: true, port: 1, enableOfflineQueue: false });
const locks = createLocks({ redis: idle });
afterAll(async () => {
  await locks.close();
  idle.disconnect();
});

// Names are any string of 1-512 UTF-8 bytes without control characters (DESIGN §2).
const badResources: unknown[] = [
  "",
  "a".repeat(513),
  "é".repeat(257), // 514 bytes in 257 characters
  "订".repeat(171), // 513 bytes
  "new\nline",
  "tab\there",
  "nul\u0000",
  "del\u007f",
  "\u001f",
  "lone \ud800 surrogate",
  "\udc00",
  undefined,
  null,
  42,
  {},
  // An array is several resources at once (multi/order.ts): each name must be valid.
  ["a", 7],
  ["a", ""],
  [["a"]],
];

describe("bad input gets typed errors with no Redis call", () => {
  it.each(badResources.map((r) => [JSON.stringify(r) ?? String(r), r]))(
    "resource %s",
    async (_, resource) => {
      const r = resource as string;
      await expect(locks.acquire(r)).rejects.toBeInstanceOf(InvalidResourceError);
      await expect(locks.tryAcquire(r)).rejects.toBeInstanceOf(InvalidResourceError);
      await expect(locks.withLock(r, async () => 1)).rejects.toBeInstanceOf(InvalidResourceError);
      expect(idle.status).toBe("wait");
    },
  );

  it("names of up to 512 UTF-8 bytes of any non-control character are accepted and locked", async () => {
    const ok = [
      "a".repeat(512),
      "é".repeat(256),
      "订".repeat(170),
      "🔒".repeat(128),
      "has space",
      "glob*?[x]",
      "ünï",
      "user:alice@example.com",
      "files/2026/report.pdf",
      "\u0080\u00a0\u2028",
    ];
    for (const r of ok) expect(isValidResource(r), r).toBe(true);
    const redis = connect();
    const live = createLocks({ redis });
    for (const r of [...ok, "brace{x}", "50%"]) {
      const h = await live.acquire(r);
      expect(h.resource).toBe(r);
      expect(await redis.hget(h.key, h.owner)).toBe("1");
      await h.release();
    }
    expect((await live.acquire("brace{x}%")).key).toBe("lock:{brace%7Bx%7D%25}");
    await live.close();
    redis.disconnect();
  });

  it.each([
    ["leaseMs", -1],
    ["leaseMs", 0],
    // Shorter than any lease a Locks may have (MIN_LEASE_MS): a Redlock could never hold it.
    ["leaseMs", 2],
    ["leaseMs", Number.NaN],
    ["leaseMs", Number.POSITIVE_INFINITY],
    ["leaseMs", 2 ** 31],
    ["leaseMs", 1.5],
    ["leaseMs", "100"],
    ["waitMs", -1],
    ["waitMs", Number.NaN],
    ["waitMs", 1e12],
    ["owner", ""],
    ["owner", "~waiters"],
    ["owner", "x".repeat(257)],
    ["owner", 7],
    // Both would be stored as "worker-\uFFFD": one owner would re-enter the other's hold.
    ["owner", "worker-\ud800"],
    ["owner", "a\u0000b"],
    ["signal", "nope"],
  ])("option %s = %s", async (name, value) => {
    const err = await locks.acquire("ok", { [name]: value }).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect(err.name).toBe("InvalidOptionError");
    expect(err.option).toBe(name);
    expect(idle.status).toBe("wait");
  });

  it("options that are not an object, a callback that is not a function", async () => {
    await expect(locks.acquire("ok", 5 as never)).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(locks.withLock("ok", "fn" as never)).rejects.toBeInstanceOf(InvalidOptionError);
    for (const match of ["", "a\nb", "[x", "[]", "x\\", "é".repeat(513), 5])
      await expect(locks.list({ match: match as string }), String(match)).rejects.toBeInstanceOf(
        InvalidOptionError,
      );
    await expect(locks.list({ count: 0 })).rejects.toBeInstanceOf(InvalidOptionError);
    expect(idle.status).toBe("wait");
  });

  it("createLocks rejects bad options synchronously", () => {
    const bad = [
      {},
      { redis: {} },
      { redis: idle, leaseMs: -5 },
      { redis: idle, leaseMs: Number.NaN },
      { redis: idle, waitMs: 2 ** 40 },
      { redis: idle, prefix: "lock:{x}" },
      { redis: idle, prefix: "" },
      { redis: idle, prefix: "fence:" },
      { redis: idle, prefix: "app:fence:" },
      { redis: idle, prefix: "a*" },
      { redis: idle, instanceId: "has space" },
      { redis: idle, instanceId: "host\u0000x" },
      { redis: idle, instanceId: "host-\udc00" },
      { redis: idle, retry: { maxMs: -1 } },
      { redis: idle, retry: { minMs: 100, maxMs: 10 } },
      { redis: idle, onEvent: "log" },
      { redis: idle, localStreak: -1 },
      { redis: idle, localStreakMs: -1 },
      { redis: idle, localStreakMs: 1.5 },
      { redis: idle, localHandoff: "sometimes" },
      { redis: idle, localHandoff: true },
      { redis: idle, handoffAdoption: "eventually" },
      { redis: idle, handoffAdoption: 1 },
    ];
    for (const o of bad) expect(() => createLocks(o as never), JSON.stringify(o)).toThrow(InvalidOptionError);
    expect(() => createLocks(undefined as never)).toThrow(InvalidOptionError);
  });

  it("refuses an option nobody reads (a misspelt one left the default in force), naming it, before any Redis call", async () => {
    const named = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof InvalidOptionError ? `${e.option}: ${e.message}` : String(e);
      }
      return "accepted";
    };
    expect(named(() => createLocks({ redis: idle, leaseMS: 100 } as never))).toMatch(
      /^leaseMS: .*no such option; "leaseMs"\?$/,
    );
    expect(named(() => createLocks({ redis: idle, retry: { maxMS: 5 } } as never))).toMatch(
      /^retry\.maxMS: .*"maxMs"\?$/,
    );
    expect(named(() => createLocks({ redis: idle, lease: 5 } as never))).toMatch(
      /^lease: .*one of prefix, leaseMs/,
    );
    const nodes = [1, 2, 3].map(() => new Redis({ lazyConnect: true, port: 1, enableOfflineQueue: false }));
    expect(named(() => createRedlock({ clients: nodes, quorom: 2 } as never))).toMatch(/^quorom: /);
    for (const n of nodes) expect(n.status).toBe("wait");
    // Set to undefined it changes nothing, as for a known option: spreading optional settings stays possible.
    expect(named(() => createLocks({ redis: idle, leaseMS: undefined } as never))).toBe("accepted");
    await expect(locks.acquire("ok", { waitMS: 10 } as never)).rejects.toMatchObject({
      name: "InvalidOptionError",
      option: "waitMS",
    });
    await expect(locks.withLock("ok", () => 1, { lease: 10 } as never)).rejects.toBeInstanceOf(
      InvalidOptionError,
    );
    await expect(locks.tryAcquire(["a", "b"], { ownr: "x" } as never)).rejects.toBeInstanceOf(
      InvalidOptionError,
    );
    // tryAcquire tries once: a waitMs given to it was ignored without a word.
    await expect(locks.tryAcquire("ok", { waitMs: 1_000 } as never)).rejects.toMatchObject({
      option: "waitMs",
    });
    await expect(locks.tryAcquire(["a", "b"], { waitMs: 1_000 } as never)).rejects.toMatchObject({
      option: "waitMs",
    });
    // list(): `knd` listed mutexes and `mtch` every lock without a word (found by a probe).
    for (const [opts, option] of [
      [{ knd: "semaphore" }, "knd"],
      [{ mtch: "nothing-matches" }, "mtch"],
      [{ Limit: 5 }, "Limit"],
      ["stock:*", "options"],
    ] as const) {
      await expect(locks.list(opts as never), option).rejects.toMatchObject({
        name: "InvalidOptionError",
        option,
      });
    }
    const redlock = createRedlock({ clients: nodes });
    await expect(redlock.list({ mtch: "x" } as never)).rejects.toMatchObject({ option: "mtch" });
    await redlock.close();
    expect(idle.status).toBe("wait");
  });

  it("refuses an ioredis client or Cluster with keyPrefix, naming keyPrefix", () => {
    const prefixed = new Redis({ lazyConnect: true, port: 1, keyPrefix: "app1:" });
    const cluster = new Cluster([{ port: 1 }], { lazyConnect: true, keyPrefix: "app1:" });
    const viaNodes = new Cluster([{ port: 1 }], { lazyConnect: true, redisOptions: { keyPrefix: "app1:" } });
    for (const redis of [prefixed, cluster, viaNodes]) {
      const err = (() => {
        try {
          createLocks({ redis });
        } catch (e) {
          return e as InvalidOptionError;
        }
      })();
      expect(err).toBeInstanceOf(InvalidOptionError);
      expect(err?.option).toBe("redis.options.keyPrefix");
      expect(err?.message).toMatch(/keyPrefix.*prefix/);
    }
    expect(() => createRedlock({ clients: [idle, prefixed, new Redis({ lazyConnect: true })] })).toThrow(
      /clients\[1\]\.options\.keyPrefix/,
    );
    // Accepted with the Lockyard prefix instead, and nothing was sent anywhere.
    createLocks({ redis: idle, prefix: "app1:" });
    expect([prefixed.status, cluster.status, viaNodes.status]).toEqual(["wait", "wait", "wait"]);
    for (const c of [prefixed, cluster, viaNodes]) c.disconnect();
  });

  it("releasing twice and using a closed Locks are typed errors with no Redis call", async () => {
    const redis = connect();
    const live = createLocks({ redis });
    const h = await live.acquire(uniq("twice"));
    await h.release();
    const before = (await redis.info("commandstats")).match(/cmdstat_evalsha:calls=(\d+)/)?.[1];
    await expect(h.release()).rejects.toBeInstanceOf(LockReleasedError);
    await expect(h.renew()).rejects.toBeInstanceOf(LockReleasedError);
    const after = (await redis.info("commandstats")).match(/cmdstat_evalsha:calls=(\d+)/)?.[1];
    expect(after).toBe(before);
    const closed = createLocks({ redis: idle });
    await closed.close();
    await expect(closed.acquire("ok")).rejects.toBeInstanceOf(LocksClosedError);
    expect(idle.status).toBe("wait");
    await live.close();
    redis.disconnect();
  });

  it("every error class extends LockError and has a stable name", () => {
    const cases: [LockError, string][] = [
      [new LockError("x"), "LockError"],
      [new InvalidResourceError("x y"), "InvalidResourceError"],
      [new InvalidOptionError("leaseMs", -1, "positive"), "InvalidOptionError"],
      [new LockTimeoutError("r", 1, 1), "LockTimeoutError"],
      [new LockLostError("r", "o", "deadline"), "LockLostError"],
      [new LockNotOwnedError("r", "o"), "LockNotOwnedError"],
      [new LockReleasedError("r"), "LockReleasedError"],
      [new QuorumError(2, 1), "QuorumError"],
      [new LocksClosedError(), "LocksClosedError"],
    ];
    for (const [err, name] of cases) {
      expect(err).toBeInstanceOf(LockError);
      expect(err).toBeInstanceOf(Error);
      expect(err.name).toBe(name);
    }
  });
});
