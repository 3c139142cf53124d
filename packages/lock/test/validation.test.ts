import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import {
  createLocks,
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
} from "../src/index.js";
import { connect, uniq } from "./helpers.js";

// A client that never connects: if any call reached it, its status would leave "wait".
const idle = new Redis({ lazyConnect: true, port: 1, enableOfflineQueue: false });
const locks = createLocks({ redis: idle });
afterAll(async () => {
  await locks.close();
  idle.disconnect();
});

const badResources: unknown[] = [
  "",
  "a".repeat(201),
  "has space",
  "brace{x}",
  "glob*",
  "q?",
  "[x]",
  "ünï",
  "new\nline",
  undefined,
  null,
  42,
  {},
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

  it("a 200-character name of every allowed character is accepted and locked", async () => {
    const ok = "Az09:_.-".repeat(25);
    expect(isValidResource(ok)).toBe(true);
    const redis = connect();
    const live = createLocks({ redis });
    const h = await live.acquire(ok);
    expect(await redis.hget(`lock:{${ok}}`, h.owner)).toBe("1");
    await h.release();
    await live.close();
    redis.disconnect();
  });

  it.each([
    ["leaseMs", -1],
    ["leaseMs", 0],
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
    await expect(locks.list({ match: "{bad}" })).rejects.toBeInstanceOf(InvalidOptionError);
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
      { redis: idle, instanceId: "has space" },
      { redis: idle, retry: { maxMs: -1 } },
      { redis: idle, retry: { minMs: 100, maxMs: 10 } },
      { redis: idle, onEvent: "log" },
    ];
    for (const o of bad) expect(() => createLocks(o as never), JSON.stringify(o)).toThrow(InvalidOptionError);
    expect(() => createLocks(undefined as never)).toThrow(InvalidOptionError);
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
