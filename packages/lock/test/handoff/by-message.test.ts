// Issue 13, a handoff between processes held from its message (core/by-message.ts): the waiter another process's
// release handed the lock to starts from the message `c:<owner> <token> <claimMs>`, without the attempt that
// would adopt it, when a refusal it heard proves the handoff ran after that refused call was sent. Each Locks has
// a connection of its own, as a separate process would. The adversarial side: a message that arrives after the
// claim ran out and the lock went elsewhere must not make a second holder.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LockHandle, Locks, LocksOptions } from "../../src/index.js";
import { queueKeyOf } from "../../src/resource.js";
import {
  commandStats,
  connect,
  deafen,
  makeLocks,
  type ReleaseSubscriptions,
  sleep,
  uniq,
} from "../helpers.js";

let redis: Redis;
const extra: Redis[] = [];
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
  for (const r of extra) r.disconnect();
});

function process_(instanceId: string, opts: Partial<LocksOptions> = {}) {
  const conn = connect();
  extra.push(conn);
  return makeLocks(conn, { instanceId, ...opts });
}

const keyOf = (resource: string) => `lock:{${resource}}`;
const queueOf = (resource: string) => redis.lrange(queueKeyOf(keyOf(resource)), 0, -1);
const scripts = (stats: Record<string, number>) => (stats.evalsha ?? 0) + (stats.eval ?? 0);

interface CoreInternals {
  subs: ReleaseSubscriptions;
  gates: Map<
    string,
    | {
        subscription: string;
        queue: { probe?: { fence: number }; attempting: boolean; attemptNow: boolean }[];
      }
    | number
  >;
}
const internals = (locks: Locks) => locks as unknown as CoreInternals;

/**
 * The waiter's gate is subscribed and the look it takes once subscribed (a release may have gone by before the
 * subscription took effect) has answered: from here on only the release's message moves it. Counting the calls a
 * release causes must start after that look, which on ioredis 5 (the handshake comes before any SUBSCRIBE) can
 * come after the waiter's entry is already in the queue.
 */
async function settled(locks: Locks, resource: string): Promise<void> {
  await expect
    .poll(() => {
      const g = internals(locks).gates.get(resource);
      const head = typeof g === "object" ? g.queue[0] : undefined;
      return (
        typeof g === "object" && g.subscription === "subscribed" && !head?.attempting && !head?.attemptNow
      );
    })
    .toBe(true);
}

/** Spies on a lock's release channel and every process's handoff channel, with a connection of its own. */
async function spy(resource: string): Promise<string[]> {
  const sub = connect();
  extra.push(sub);
  const messages: string[] = [];
  sub.on("pmessage", (_p, _ch, m) => messages.push(m));
  await sub.psubscribe(`lock-released:{${resource}}*`);
  return messages;
}

/** The lock's one handoff message, published by `release` and kept by a spy (the waiter being deaf). */
async function handoffMessage(resource: string, release: () => Promise<unknown>): Promise<string> {
  const messages = await spy(resource);
  await release();
  await expect.poll(() => messages.length).toBe(1);
  return messages[0]!;
}

/** The claim's mark is gone and the key has the waiter's full lease: an attempt adopted the handoff. */
async function expectAdopted(resource: string): Promise<void> {
  expect(await redis.hget(keyOf(resource), "~handed")).toBeNull();
  expect(await redis.pttl(keyOf(resource))).toBeGreaterThan(10_000);
}

describe("a handoff between processes held from its message", () => {
  it("starts the waiter with no call of its own, under the claim until the watchdog's renewal raises it to the lease", async () => {
    const resource = uniq("bymsg");
    const a = process_("msg-a", { retry: { queueLeaseMs: 900 } });
    const b = process_("msg-b");
    const held = await a.locks.acquire(resource);
    const waiting = b.locks.acquire(resource);
    await expect.poll(() => queueOf(resource)).toHaveLength(1);
    await settled(b.locks, resource);
    const messages = await spy(resource);
    const before = await commandStats(redis);
    expect(await held.release()).toBe("released");
    const h = await waiting;
    const after = await commandStats(redis);
    // The release, and nothing from the waiter: no adopting attempt.
    expect(scripts(after) - scripts(before)).toBe(1);
    expect(messages).toEqual([`c:${h.owner} ${h.token} 900`]);
    expect(h.token).toBeGreaterThan(held.token!);
    expect(b.events.find((e) => e.type === "acquired")).toMatchObject({ count: 1, owner: h.owner });
    // Redis still shows the handoff's claim (never adopted by an attempt), and the handle holds under it.
    const fields = await redis.hgetall(keyOf(resource));
    expect(fields).toMatchObject({ [h.owner]: "1", "~handed": h.owner });
    expect(await redis.pttl(keyOf(resource))).toBeLessThanOrEqual(900);
    expect(h.isHeld()).toBe(true);
    // The watchdog renews before the claim runs out: the key's TTL goes up to the 30 s lease, still held.
    await expect.poll(() => redis.pttl(keyOf(resource)), { timeout: 2_000 }).toBeGreaterThan(900);
    await sleep(1_000);
    expect(h.isHeld()).toBe(true);
    expect(await redis.hget(keyOf(resource), h.owner)).toBe("1");
    expect(await h.release()).toBe("released");
    expect(await redis.exists(keyOf(resource))).toBe(0);
    await a.locks.close();
    await b.locks.close();
  });

  it("counts a hold taken from the message as held from then, not from the refusal that proved it", async () => {
    const resource = uniq("bymsg-held");
    const a = process_("held-a");
    const b = process_("held-b");
    const held = await a.locks.acquire(resource);
    const waiting = b.locks.acquire(resource);
    await expect.poll(() => queueOf(resource)).toHaveLength(1);
    // The waiter's last refusal (its probe) is 400 ms old when the lock is handed to it.
    await sleep(400);
    await held.release();
    const h = await waiting;
    expect(h.isHeld()).toBe(true);
    await h.release();
    const released = b.events.find((e) => e.type === "released");
    expect(released).toMatchObject({ owner: h.owner });
    expect((released as { heldMs: number }).heldMs).toBeLessThan(200);
    await a.locks.close();
    await b.locks.close();
  });

  it("a probe older than the waiter's own lease: held under the claim, not lost at once", async () => {
    // Found by a probe (3+ processes, leaseMs 300): another waiter's claim made this one sleep ~500 ms after its
    // refusal, and the handle counted its lease from that refusal: born past its deadline, the grant refused.
    const resource = uniq("bymsg-old-probe");
    const a = process_("old-probe-a");
    const b = process_("old-probe-b", { leaseMs: 300, retry: { maxMs: 1_500 } });
    const held = await a.locks.acquire(resource);
    const waiting = b.locks.acquire(resource, { waitMs: 5_000 });
    await expect.poll(() => queueOf(resource)).toHaveLength(1);
    await settled(b.locks, resource);
    const messages = await spy(resource);
    await sleep(500);
    await held.release();
    const h = await waiting;
    expect(messages).toEqual([expect.stringMatching(new RegExp(`^c:${h.owner} ${h.token} \\d+$`))]);
    expect(h.isHeld()).toBe(true);
    expect(b.events.some((e) => e.type === "lost")).toBe(false);
    // The watchdog raises the claim to the 300 ms lease and keeps it: still held well past the old probe's lease.
    await sleep(700);
    expect(h.isHeld()).toBe(true);
    expect(await redis.hget(keyOf(resource), h.owner)).toBe("1");
    expect(await h.release()).toBe("released");
    await a.locks.close();
    await b.locks.close();
  });

  it("counts on the claim only: with its renewal held up past the claim's end, the hold is lost, never held on trust", async () => {
    const resource = uniq("bymsg-paused");
    const a = process_("paused-a", { retry: { queueLeaseMs: 600 } });
    const b = process_("paused-b");
    const side = connect();
    extra.push(side);
    const held = await a.locks.acquire(resource);
    const waiting = b.locks.acquire(resource);
    await expect.poll(() => queueOf(resource)).toHaveLength(1);
    await held.release();
    const h = await waiting;
    expect(h.isHeld()).toBe(true);
    // Writes (the watchdog's renewal among them) wait in Redis past the claim's 600 ms.
    await side.call("client", "pause", "1500", "WRITE");
    // isHeld() turns false at the deadline itself; the loss is recorded when the deadline's timer runs, which a
    // loaded machine may run late: wait for the reason, not only for isHeld().
    const lostReason = () => (h as unknown as { lostError?: { reason: string } }).lostError?.reason;
    await expect.poll(lostReason, { timeout: 1_400, interval: 20 }).toBe("deadline");
    expect(h.isHeld()).toBe(false);
    await side.call("client", "unpause");
    await a.locks.close();
    await b.locks.close();
  });

  it('adopts with an attempt instead when the waiter set its own leaseMs (no watchdog would raise the claim), or with handoffAdoption "attempt"', async () => {
    for (const [opts, lease] of [
      [{}, { leaseMs: 20_000 }],
      [{ handoffAdoption: "attempt" } as const, {}],
    ] as const) {
      const resource = uniq("bymsg-attempt");
      const a = process_("msg-c");
      const b = process_("msg-d", opts);
      const held = await a.locks.acquire(resource);
      const waiting = b.locks.acquire(resource, lease);
      await expect.poll(() => queueOf(resource)).toHaveLength(1);
      await settled(b.locks, resource);
      const before = await commandStats(redis);
      await held.release();
      const h = await waiting;
      const after = await commandStats(redis);
      expect(scripts(after) - scripts(before)).toBe(2);
      await expectAdopted(resource);
      await h.release();
      await a.locks.close();
      await b.locks.close();
    }
  });

  it("hears an older version's handoff message (`h:<owner>`, no token) as a release: the waiter adopts the lock with an attempt", async () => {
    const resource = uniq("bymsg-old");
    const a = process_("old-a");
    const b = process_("old-b");
    const held = await a.locks.acquire(resource);
    const waiting = b.locks.acquire(resource);
    await expect.poll(() => queueOf(resource)).toHaveLength(1);
    // b goes deaf; the test delivers the handoff as an older version announces it (owner only).
    const bSubs = await deafen(b.locks);
    const message = await handoffMessage(resource, () => held.release());
    const owner = message.split(" ")[0]!.slice("c:".length);
    bSubs.onRelease(resource, `h:${owner}`);
    const h = await waiting;
    expect(h.owner).toBe(owner);
    await expectAdopted(resource);
    await h.release();
    await a.locks.close();
    await b.locks.close();
  });

  it("a message that arrives after the claim ran out and the lock went elsewhere makes no second holder", async () => {
    const resource = uniq("bymsg-late");
    const claimMs = 300;
    const a = process_("late-a", { retry: { queueLeaseMs: claimMs } });
    // b re-checks rarely (its entry lives 60 s): it hears only what the test lets it hear.
    const b = process_("late-b", { retry: { maxMs: 20_000, queueLeaseMs: 60_000 } });
    const c = process_("late-c");
    const held = await a.locks.acquire(resource);
    const waiting = b.locks.acquire(resource, { waitMs: 30_000 });
    let bHolds: LockHandle | undefined;
    void waiting.then((h) => {
      bHolds = h;
    });
    await expect.poll(() => queueOf(resource)).toHaveLength(1);
    // b goes deaf; the handoff's message is kept, to be delivered late.
    const bSubs = await deafen(b.locks);
    const late = await handoffMessage(resource, () => held.release());
    const token = Number(late.split(" ")[1]);
    // The claim runs out unadopted; c takes the lock afresh.
    await sleep(claimMs + 50);
    const taken = await c.locks.acquire(resource);
    expect(taken.token).toBeGreaterThan(token);
    // b looks once (as after any release message) and is refused: that refusal saw c's token.
    bSubs.onRelease(resource, "1");
    const gate = () => internals(b.locks).gates.get(resource);
    await expect
      .poll(() => {
        const g = gate();
        return typeof g === "object" ? (g.queue[0]?.probe?.fence ?? 0) : 0;
      })
      .toBe(taken.token);
    // Now the handoff's message arrives. b must not hold from it: c holds the lock.
    bSubs.onRelease(resource, late);
    await sleep(100);
    expect(bHolds).toBeUndefined();
    expect(taken.isHeld()).toBe(true);
    expect(Object.keys(await redis.hgetall(keyOf(resource)))).toContain(taken.owner);
    // And b gets the lock the honest way once c lets go (it is deaf: the test tells it to look).
    await taken.release();
    bSubs.onRelease(resource, "1");
    const h = await waiting;
    expect(h.token).toBeGreaterThan(taken.token!);
    await h.release();
    for (const p of [a, b, c]) await p.locks.close();
  });
});
