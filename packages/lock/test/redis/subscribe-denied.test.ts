// A subscription that Redis refuses must neither leave a waiter deaf nor make it spin. Found by the clean-clone
// CI on ioredis 5.11, whose SUBSCRIBE sent while the subscriber connects races its own handshake (ioredis
// #2037, fixed in 6.0): every SUBSCRIBE of the new connection is rejected. The Redlock subscriber counted a
// subscription that no node confirmed as made, so a waiter slept until its fallback timer although the
// release was announced. Here the refusal is real and under the test's control: the waiter's Redis user may
// not use any channel (ACL `resetchannels`) until the test allows it.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocks, createRedlock, type LockHandle, type Locks } from "../../src/index.js";
import { CHANNEL_DENIED_WARNING } from "../../src/redis/channel-rights.js";
import { sleep, uniq } from "../helpers.js";
import { failFast, type RedisServer, ready, startRedis } from "../redlock-helpers.js";

const USER = "deaf";
const PASSWORD = "deaf-pw";
// Every key and command, no channel: its SUBSCRIBE is refused (NOPERM), its acquire is not.
const NO_CHANNELS = ["on", `>${PASSWORD}`, "~*", "resetchannels", "+@all"];
const RETRY_MS = 1_000;
const retry = { minMs: RETRY_MS, maxMs: RETRY_MS, jitterMs: 0 };

let servers: RedisServer[] = [];
let admins: Redis[] = [];
const open: Locks[] = [];
const conns: Redis[] = [];

beforeAll(async () => {
  servers = await Promise.all([0, 1, 2].map(() => startRedis()));
  admins = servers.map((s) => new Redis(s.url));
});
afterAll(async () => {
  for (const l of open) await l.close().catch(() => {});
  for (const c of [...conns, ...admins]) c.disconnect();
  await Promise.all(servers.map((s) => s.stop()));
});

async function denyChannels() {
  for (const a of admins) await a.call("acl", "setuser", USER, ...NO_CHANNELS);
}
async function allowChannels() {
  for (const a of admins) await a.call("acl", "setuser", USER, "allchannels");
}
/** Top-level script calls a node has run, and SUBSCRIBEs it refused. */
async function counts(node: number): Promise<{ scripts: number; refusedSubscribes: number }> {
  const info = await admins[node]!.info("commandstats");
  const stat = (cmd: string, field: string) =>
    Number(new RegExp(`cmdstat_${cmd}:.*?${field}=(\\d+)`).exec(info)?.[1] ?? 0);
  return {
    scripts: stat("evalsha", "calls") + stat("eval", "calls"),
    refusedSubscribes: stat("subscribe", "rejected_calls"),
  };
}
async function client(node: number, user?: string): Promise<Redis> {
  const c = new Redis(servers[node]!.url, {
    ...failFast,
    ...(user ? { username: user, password: PASSWORD } : {}),
  });
  c.on("error", () => {});
  conns.push(c);
  await ready(c);
  return c;
}
const clients = (user?: string) => Promise.all([0, 1, 2].map((i) => client(i, user)));

type Made = { holder: Locks; waiter: Locks };
const standalone = async (): Promise<Made> => ({
  holder: createLocks({ redis: await client(0), leaseMs: 10_000 }),
  waiter: createLocks({ redis: await client(0, USER), leaseMs: 10_000, retry }),
});
const redlock = async (): Promise<Made> => ({
  holder: createRedlock({ clients: await clients(), leaseMs: 10_000 }),
  waiter: createRedlock({ clients: await clients(USER), leaseMs: 10_000, retry }),
});
/** Channels denied to USER, then a holder and a waiter (closed after the file if a test fails first). */
async function deniedPair(make: () => Promise<Made>): Promise<Made> {
  await denyChannels();
  const made = await make();
  open.push(made.holder, made.waiter);
  return made;
}
// The other way round: the holder, whose release publishes, is the user without channels.
const deafHolderStandalone = async (): Promise<Made> => ({
  holder: createLocks({ redis: await client(0, USER), leaseMs: 10_000 }),
  waiter: createLocks({ redis: await client(0), leaseMs: 10_000, retry }),
});
const deafHolderRedlock = async (): Promise<Made> => ({
  holder: createRedlock({ clients: await clients(USER), leaseMs: 10_000 }),
  waiter: createRedlock({ clients: await clients(), leaseMs: 10_000, retry }),
});

describe.each([
  ["one Redis", standalone],
  ["Redlock", redlock],
])("a waiter whose subscription Redis refuses (%s)", (_, make) => {
  it("subscribes again once it may, and is woken by the release, not by its timer", async () => {
    const { holder, waiter } = await deniedPair(make);
    const res = uniq("denied");
    const held = await holder.acquire(res);
    const start = performance.now();
    const waiting = waiter.acquire(res, { waitMs: 10_000 }).then((h) => ({ h, at: performance.now() }));
    // Its first subscription is refused; allowed from now on, its next look (the timer, 1 s) subscribes again.
    await sleep(100);
    await allowChannels();
    // Past that look, and well before the one after it (2 s).
    await sleep(start + 1.5 * RETRY_MS - performance.now());
    const releasedAt = performance.now();
    await held.release();
    const { h, at } = await waiting;
    // Woken by the release message: a waiter still deaf looks only at 2 s, 500 ms after the release.
    expect(at - releasedAt).toBeLessThan(RETRY_MS / 4);
    await h.release();
    await Promise.all([holder.close(), waiter.close()]);
  });

  it("does not retry a refused subscription in a loop: it looks on its timer, and gets the lock", async () => {
    const { holder, waiter } = await deniedPair(make);
    const res = uniq("denied");
    const held = await holder.acquire(res);
    const before = await counts(0);
    let got: LockHandle | undefined;
    const waiting = waiter.acquire(res, { waitMs: 10_000 }).then((h) => {
      got = h;
    });
    await sleep(2.5 * RETRY_MS);
    const after = await counts(0);
    // Looks at 0, once more at once (a first refusal may be a connection not yet ready), 1 s and 2 s (4 seen).
    expect(after.scripts - before.scripts).toBeLessThanOrEqual(6);
    expect(after.refusedSubscribes - before.refusedSubscribes).toBeGreaterThan(0);
    expect(after.refusedSubscribes - before.refusedSubscribes).toBeLessThanOrEqual(5);
    await held.release();
    await waiting;
    expect(got?.isHeld()).toBe(true);
    await allowChannels();
    await got?.release();
    await Promise.all([holder.close(), waiter.close()]);
  });
});

describe.each([
  ["one Redis", standalone, deafHolderStandalone],
  ["Redlock", redlock, deafHolderRedlock],
])("a Redis user without the lock's channels (%s)", (_, make, makeDeafHolder) => {
  it("releases: the message Redis denies is dropped, not the release's answer, and the waiter still gets the lock", async () => {
    const { holder, waiter } = await deniedPair(makeDeafHolder);
    const res = uniq("denied-release");
    const held = await holder.acquire(res);
    const waiting = waiter.acquire(res, { waitMs: 10_000 });
    // Refused: the lock is marked as waited for (and on one Redis the waiter queues), so the release publishes.
    await sleep(300);
    // Raised inside the script, the denied PUBLISH failed the release after it had freed (or handed over) the lock.
    await expect(held.release()).resolves.toBe("released");
    const h = await waiting;
    expect(h.isHeld()).toBe(true);
    await h.release();
    await Promise.all([holder.close(), waiter.close()]);
  });

  it("is told once, by a process warning that names the channels to grant", async () => {
    const { holder, waiter } = await deniedPair(make);
    const warnings: Error[] = [];
    const onWarning = (w: Error & { code?: string }) => {
      if (w.code === CHANNEL_DENIED_WARNING) warnings.push(w);
    };
    process.on("warning", onWarning);
    try {
      const [a, b] = [uniq("denied-warn"), uniq("denied-warn")];
      const held = await Promise.all([holder.acquire(a), holder.acquire(b)]);
      const before = await counts(0);
      const waiting = Promise.all([
        waiter.acquire(a, { waitMs: 10_000 }),
        waiter.acquire(b, { waitMs: 10_000 }),
      ]);
      // Both resources' subscriptions refused, each at least twice (the first refusal looks again at once).
      for (let i = 0; i < 100 && (await counts(0)).refusedSubscribes - before.refusedSubscribes < 4; i++)
        await sleep(20);
      await sleep(50);
      for (const h of held) await h.release();
      for (const h of await waiting) await h.release();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toMatch(/^Redis refused SUBSCRIBE to lock-released:\{/);
      expect(warnings[0]!.message).toContain("ACL SETUSER <user> &lock-released:*");
    } finally {
      process.off("warning", onWarning);
    }
    await Promise.all([holder.close(), waiter.close()]);
  });
});
