// Found by the simulation's tighter lost-wake-up bound (seed 441): a waiter that queued while another call's
// one-shot attempt (tryAcquire, or acquire with waitMs 0) was in flight never tried itself, so it had not
// subscribed; the refusal marked the lock as waited for and left the head asleep for a release message it
// could not hear. It slept its whole wait (up to retry.maxMs) while the lock was free.
import net from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { type Locks, LockTimeoutError, lockKey, queueKeyOf } from "../../src/index.js";
import { connect, makeLocks, sleep, uniq, untilListening } from "../helpers.js";

let redis: Redis;
let other: Redis;
beforeAll(() => {
  redis = connect();
  other = connect();
});
afterAll(() => {
  redis.disconnect();
  other.disconnect();
});

describe("a waiter queued behind a refused one-shot attempt", () => {
  it.each([
    ["tryAcquire", true],
    ["acquire with waitMs 0", false],
  ] as const)("after %s, gets the lock once it is released, well within its wait", async (_, useTry) => {
    // A fallback timer longer than the wait: only a look prompted by the release can get the lock in time.
    const { locks } = makeLocks(redis, { retry: { minMs: 60_000, maxMs: 60_000, jitterMs: 0 } });
    const { locks: theirs } = makeLocks(other);
    const res = uniq("queued");
    const held = await theirs.acquire(res);

    const oneShot = useTry
      ? locks.tryAcquire(res)
      : locks.acquire(res, { waitMs: 0 }).catch((e: unknown) => (e as Error).name);
    // Queued locally behind the attempt in flight: it sends nothing of its own yet.
    const waiter = locks.acquire(res, { waitMs: 3_000 });
    expect(await oneShot).toEqual(useTry ? null : "LockTimeoutError");

    await held.release();
    const h = await waiter;
    expect(h.isHeld()).toBe(true);
    await h.release();
    await locks.close();
    await theirs.close();
  });
});

// Found by the simulation with --extra (seed 2441): a waiter became head when the waiter before it was
// granted (with more queued, so the release would publish). It never tried itself, so it knew no PTTL; the
// holder's fixed lease then ran out, which publishes nothing, and the head slept its whole wait.
describe("a head that never tried, behind a local grant whose lease runs out unreleased", () => {
  it("looks again when that lease ends, not only after retry.maxMs", async () => {
    const { locks } = makeLocks(redis, { retry: { minMs: 5, maxMs: 60_000, jitterMs: 0 } });
    const { locks: theirs } = makeLocks(other);
    const res = uniq("expiring");
    const held = await theirs.acquire(res);
    const first = locks.acquire(res, { leaseMs: 300, waitMs: 5_000 });
    const second = locks.acquire(res, { waitMs: 3_000 });
    await new Promise((r) => setTimeout(r, 50));
    await held.release();
    const h1 = await first; // never released: its 300 ms lease runs out in Redis, silently
    expect(h1.count).toBe(1);
    const h2 = await second;
    expect(h2.isHeld()).toBe(true);
    await h2.release();
    await locks.close();
    await theirs.close();
  });
});

// Found by the simulation with --redlock --extra (seed 9709211): a one-shot attempt's reply was slow (its
// node's reply lost, then an undo), and while it was on its way the lock was released and the release
// message heard, by a process whose queue was empty then. A waiter queued next, behind the attempt still in
// flight, and never tried. The attempt's late refusal was stale, but "refused, and we listen" kept the new
// head asleep for its whole wait, the lock free. The same head also knew no PTTL: had the holder's lease run
// out silently instead, nothing would have woken it before retry.maxMs.
describe("a head that never tried, behind a one-shot attempt whose refusal comes back late", () => {
  it("tries when a release was heard while the refusal was on its way", async () => {
    const proxy = await startReplyHolder(inject("redisUrl"));
    const conn = new Redis(proxy.url);
    const { locks } = makeLocks(conn, { retry: { minMs: 60_000, maxMs: 60_000, jitterMs: 0 } });
    const { locks: theirs } = makeLocks(other);
    const res = uniq("stale-refusal");
    try {
      const held = await theirs.acquire(res);
      const gate = await listeningGate(locks, res);

      proxy.holdReplies();
      const oneShot = locks.tryAcquire(res); // refused in Redis; the refusal waits in the proxy
      await expect(gate.first).rejects.toThrow(LockTimeoutError);
      await vi.waitFor(async () => expect(await other.exists(queueKeyOf(lockKey("lock:", res)))).toBe(0));
      const epoch = gate.epoch();
      await held.release(); // publishes: the refusal marked the lock as waited for
      await vi.waitFor(() => expect(gate.epoch()).toBeGreaterThan(epoch));

      const waiter = locks.acquire(res, { waitMs: 3_000 }); // queues behind the attempt in flight
      await sleep(50);
      proxy.releaseReplies();
      expect(await oneShot).toBeNull();
      const h = await waiter;
      expect(h.isHeld()).toBe(true);
      await h.release();
    } finally {
      await locks.close();
      await theirs.close();
      conn.disconnect();
      await proxy.close();
    }
  });

  it("tries when the lease that refused it runs out, although that publishes nothing", async () => {
    const proxy = await startReplyHolder(inject("redisUrl"));
    const conn = new Redis(proxy.url);
    const { locks } = makeLocks(conn, { retry: { minMs: 5, maxMs: 60_000, jitterMs: 0 } });
    const { locks: theirs } = makeLocks(other);
    const res = uniq("silent-expiry");
    try {
      await theirs.acquire(res, { leaseMs: 800 }); // never released: its lease runs out in Redis, silently
      const gate = await listeningGate(locks, res);

      proxy.holdReplies();
      const oneShot = locks.tryAcquire(res);
      await expect(gate.first).rejects.toThrow(LockTimeoutError);
      const waiter = locks.acquire(res, { waitMs: 3_000 });
      await sleep(50);
      proxy.releaseReplies();
      expect(await oneShot).toBeNull();
      const h = await waiter;
      expect(h.isHeld()).toBe(true);
      await h.release();
    } finally {
      await locks.close();
      await theirs.close();
      conn.disconnect();
      await proxy.close();
    }
  });
});

describe("a head woken by something other than its timer", () => {
  it("still looks when the lease that refused it ends, not a whole PTTL after the wake", async () => {
    // Found by the simulation (--kinds seed 7700272): another call's refusal woke the head without a look, and
    // the head slept its own last PTTL again from then; repeated such wakes put its look off for good.
    const { locks } = makeLocks(redis, { retry: { minMs: 5, maxMs: 60_000, jitterMs: 0 } });
    const { locks: theirs } = makeLocks(other);
    const res = uniq("woken-head");
    try {
      await theirs.acquire(res, { leaseMs: 1_500 }); // never released: its lease runs out in Redis, silently
      const started = performance.now();
      const waiter = locks.acquire(res, { waitMs: 4_000 });
      await untilListening(locks, res);
      // A one-shot attempt of the same process, refused 1 s later with the same end: it wakes the head.
      await sleep(1_000 - (performance.now() - started));
      expect(await locks.tryAcquire(res)).toBeNull();
      const h = await waiter;
      // The lease ended at 1.5 s; slept again from the wake, the head would have looked at about 2.5 s.
      expect(performance.now() - started).toBeLessThan(2_100);
      await h.release();
    } finally {
      await locks.close();
      await theirs.close();
    }
  });
});

/**
 * Makes `locks` listen for the resource's release messages: a first waiter (300 ms wait) is refused and
 * subscribes. Returns that waiter's promise and the gate's release epoch (the count of messages heard).
 */
async function listeningGate(locks: Locks, res: string) {
  const first = locks.acquire(res, { waitMs: 300 });
  first.catch(() => {});
  const gate = await untilListening(locks, res);
  return { first, epoch: () => gate()?.epoch ?? -1 };
}

/**
 * A TCP proxy to Redis that, while holding, keeps the replies on the first connection (the Locks' commands)
 * and forwards them when told; other connections (the release subscriber) pass freely.
 */
async function startReplyHolder(targetUrl: string) {
  const target = new URL(targetUrl);
  const sockets = new Set<net.Socket>();
  const held: Buffer[] = [];
  let holding = false;
  let first: net.Socket | undefined;
  const server = net.createServer((client) => {
    first ??= client;
    const isFirst = first === client;
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.on("data", (d) => upstream.write(d));
    upstream.on("data", (d) => {
      if (isFirst && holding) held.push(d);
      else client.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    holdReplies() {
      holding = true;
    },
    releaseReplies() {
      holding = false;
      for (const d of held.splice(0)) first?.write(d);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
