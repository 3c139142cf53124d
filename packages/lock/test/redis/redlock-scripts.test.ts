// Redlock's scripts (redis/scripts/redlock-*.ts) differ from the single-Redis ones only where they must:
// no fencing token on acquire, the owner as the release message. Each step below runs on the same inputs
// through both families, on keys of their own, and the replies and the keys they leave must agree.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acquire } from "../../src/redis/scripts/acquire.js";
import { redlockAcquire } from "../../src/redis/scripts/redlock-acquire.js";
import { redlockRelease } from "../../src/redis/scripts/redlock-release.js";
import { release } from "../../src/redis/scripts/release.js";
import { connect, uniq } from "../helpers.js";

let redis: Redis;
let sub: Redis;
beforeAll(() => {
  redis = connect();
  sub = connect();
});
afterAll(() => {
  redis.disconnect();
  sub.disconnect();
});

interface Keys {
  lock: string;
  fence: string;
  channel: string;
  queue: string;
  queueLeases: string;
}
const keysFor = (name: string): Keys => ({
  lock: `${name}:lock`,
  fence: `${name}:fence`,
  channel: `${name}:ch`,
  queue: `${name}:queue`,
  queueLeases: `${name}:queue-leases`,
});

type Step =
  | { op: "acquire"; owner: string; leaseMs: number; more?: boolean }
  | { op: "release"; owner: string; leaseMs: number };

/** Runs a step through the single-Redis script; the reply without the token. */
async function single(k: Keys, s: Step): Promise<unknown[]> {
  if (s.op === "acquire") {
    const r = (await redis.eval(
      acquire.lua,
      4,
      k.lock,
      k.fence,
      k.queue,
      k.queueLeases,
      s.owner,
      s.leaseMs,
      s.more ? "1" : "0",
      "0",
      1500,
    )) as number[];
    return r.slice(0, 2);
  }
  return (await redis.eval(
    release.lua,
    5,
    k.lock,
    k.channel,
    k.fence,
    k.queue,
    k.queueLeases,
    s.owner,
    s.leaseMs,
    "0",
    "",
    1500,
    "",
    0,
  )) as unknown[];
}

async function redlock(k: Keys, s: Step): Promise<unknown[]> {
  if (s.op === "acquire") {
    return (await redis.eval(
      redlockAcquire.lua,
      1,
      k.lock,
      s.owner,
      s.leaseMs,
      s.more ? "1" : "0",
    )) as unknown[];
  }
  return (await redis.eval(redlockRelease.lua, 2, k.lock, k.channel, s.owner, s.leaseMs)) as unknown[];
}

/** What a step leaves behind: the hash, and its TTL rounded to the second (the two runs are ms apart). */
async function state(k: Keys) {
  return { hash: await redis.hgetall(k.lock), ttlS: Math.round((await redis.pttl(k.lock)) / 1000) };
}

/** Replies' pttl values are rounded too. */
const rounded = (reply: unknown[], s: Step) =>
  s.op === "acquire" && reply[0] === 0 ? [0, Math.round(Number(reply[1]) / 1000)] : reply;

async function compare(steps: Step[]) {
  const name = uniq("redlock-scripts");
  const a = keysFor(`${name}:single`);
  const b = keysFor(`${name}:redlock`);
  const messages: Record<string, string[]> = { [a.channel]: [], [b.channel]: [] };
  const onMessage = (ch: string, m: string) => messages[ch]?.push(m);
  sub.on("message", onMessage);
  await sub.subscribe(a.channel, b.channel);
  try {
    for (const s of steps) {
      const [x, y] = [await single(a, s), await redlock(b, s)];
      expect(rounded(y, s), JSON.stringify(s)).toEqual(rounded(x, s));
      expect(await state(b), JSON.stringify(s)).toEqual(await state(a));
    }
    // A PING on the subscriber's connection comes back after every message published before it.
    await sub.ping();
    return { single: messages[a.channel], redlock: messages[b.channel] };
  } finally {
    await sub.unsubscribe(a.channel, b.channel);
    sub.off("message", onMessage);
  }
}

describe("redlock scripts agree with the single-Redis scripts", () => {
  it("grant, refusal marking waiters, the owner's release deleting and publishing, a stale release refused", async () => {
    const published = await compare([
      { op: "acquire", owner: "a", leaseMs: 10_000 },
      { op: "acquire", owner: "b", leaseMs: 10_000 },
      { op: "release", owner: "b", leaseMs: 10_000 },
      { op: "release", owner: "a", leaseMs: 60_000 },
      { op: "release", owner: "a", leaseMs: 10_000 },
    ]);
    // The one release that found `~waiters` published; only the message differs.
    expect(published).toEqual({ single: ["1"], redlock: ["a"] });
  });

  it("a grant told that more wait behind it publishes on release; one that was not told does not", async () => {
    expect(
      await compare([
        { op: "acquire", owner: "a", leaseMs: 10_000, more: true },
        { op: "release", owner: "a", leaseMs: 10_000 },
        { op: "acquire", owner: "c", leaseMs: 10_000 },
        { op: "release", owner: "c", leaseMs: 10_000 },
      ]),
    ).toEqual({ single: ["1"], redlock: ["a"] });
  });
});

describe("redlock scripts: what an attempt refused by another owner's quorum needs", () => {
  it("a refusal names the owner holding the node; an undo told not to announce publishes nothing", async () => {
    const k = keysFor(uniq("redlock-undo"));
    const messages: string[] = [];
    const onMessage = (_ch: string, m: string) => messages.push(m);
    sub.on("message", onMessage);
    await sub.subscribe(k.channel);
    try {
      expect(await redis.eval(redlockAcquire.lua, 1, k.lock, "a", 10_000, "0")).toEqual([1, 1]);
      const refused = (await redis.eval(redlockAcquire.lua, 1, k.lock, "b", 10_000, "0")) as unknown[];
      expect([refused[0], refused[2]]).toEqual([0, "a"]);
      expect(await redis.hget(k.lock, "~waiters")).toBe("1");
      expect(await redis.eval(redlockRelease.lua, 2, k.lock, k.channel, "a", 10_000, "0")).toEqual([2, 0]);
      expect(await redis.exists(k.lock)).toBe(0);
      await sub.ping();
      expect(messages).toEqual([]);
    } finally {
      await sub.unsubscribe(k.channel);
      sub.off("message", onMessage);
    }
  });
});

describe("redlock scripts hold each owner once (re-entry is counted in the process, redlock/holds.ts)", () => {
  it("asked again by its owner, a node grants with count 1 and raises the TTL, never lowers it", async () => {
    const k = keysFor(uniq("redlock-once"));
    const acquireAs = (leaseMs: number) =>
      redis.eval(redlockAcquire.lua, 1, k.lock, "a", leaseMs, "0") as Promise<number[]>;
    expect(await acquireAs(10_000)).toEqual([1, 1]);
    expect(await acquireAs(5_000)).toEqual([1, 1]);
    expect(await redis.hgetall(k.lock)).toEqual({ a: "1" });
    expect(Math.round((await redis.pttl(k.lock)) / 1000)).toBe(10);
    expect(await acquireAs(30_000)).toEqual([1, 1]);
    expect(Math.round((await redis.pttl(k.lock)) / 1000)).toBe(30);
  });

  it("one release by the owner deletes the key however often it was granted; run again it is not-owner", async () => {
    const k = keysFor(uniq("redlock-once"));
    for (let i = 0; i < 3; i++) await redis.eval(redlockAcquire.lua, 1, k.lock, "a", 10_000, "0");
    const releaseAs = () => redis.eval(redlockRelease.lua, 2, k.lock, k.channel, "a", 10_000);
    expect(await releaseAs()).toEqual([2, 0]);
    expect(await redis.exists(k.lock)).toBe(0);
    expect(await releaseAs()).toEqual([0, 0]);
  });
});
