import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createRedlock,
  type LockHandle as Handle,
  LockLostError,
  type Locks,
  QuorumError,
} from "../../src/index.js";
import { sleep, uniq } from "../helpers.js";
import { failFast, lockKeysOn, type Nodes, ready, startNodes } from "../redlock-helpers.js";

// Faults that make a node's client refuse commands for a while without the node forgetting anything:
// CLIENT KILL of one connection (its client reconnects after RECONNECT_MS and refuses commands meanwhile),
// CLIENT PAUSE and SIGSTOP for a node that is slow to answer.
const RECONNECT_MS = 300;

describe.each([3, 5])("Redlock over %i nodes: a node's client reconnecting", (n) => {
  const quorum = Math.floor(n / 2) + 1;
  /** Enough nodes that a quorum can no longer say yes without them: 1 .. n - quorum + 1. */
  const failing = Array.from({ length: n - quorum + 1 }, (_, i) => i + 1);
  let nodes: Nodes;
  const own: Redis[] = [];
  const open: Locks[] = [];

  beforeAll(async () => {
    nodes = await startNodes(n);
  });
  afterEach(async () => {
    for (const rl of open.splice(0)) await rl.close();
    for (const c of own.splice(0)) c.disconnect();
    await nodes.reviveAll();
  });
  afterAll(async () => {
    await nodes?.close();
  });

  /** A Redlock on connections of its own, which reconnect only after RECONNECT_MS once killed. */
  const ownRedlock = async (opts: Partial<Parameters<typeof createRedlock>[0]> = {}) => {
    const clients = nodes.servers.map((s) => {
      const c = new Redis(s.url, { ...failFast, retryStrategy: () => RECONNECT_MS });
      c.on("error", () => {});
      return c;
    });
    own.push(...clients);
    await Promise.all(clients.map((c) => ready(c)));
    const rl = createRedlock({ clients, leaseMs: 3_000, waitMs: 0, ...opts });
    open.push(rl);
    return { rl, clients };
  };

  /**
   * Returns a function that kills the connection of `clients[i]` for each i and resolves once each of them
   * is reconnecting (refusing commands for RECONNECT_MS).
   */
  const connectionKiller = async (clients: Redis[], which: number[]) => {
    const ids = await Promise.all(which.map((i) => clients[i]!.client("ID")));
    return async () => {
      await Promise.all(which.map((i, k) => nodes.clients[i]!.client("KILL", "ID", String(ids[k]))));
      while (which.some((i) => clients[i]!.status === "ready")) await sleep(1);
    };
  };

  it("a failed re-entry is undone only where it was sent: the outer hold stays on every node", async () => {
    const { rl, clients } = await ownRedlock({ nodeTimeoutMs: 1_500 });
    const r = uniq("rl.reentry-undo");
    const outer = await rl.acquire(r, { leaseMs: 3_000 });
    // Node 0 answers late (paused), and by then the failing nodes, which refused the re-entry unsent, are
    // connected again: an undo sent "to every node" would reach them and take back the outer hold.
    const kill = await connectionKiller(clients, failing);
    await nodes.clients[0]!.client("PAUSE", 700, "ALL");
    await kill();
    const err = await rl.tryAcquire(r, { owner: outer.owner, leaseMs: 3_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuorumError);

    for (const c of nodes.clients) expect(await lockKeysOn(c, r)).toEqual({ [outer.owner]: "1" });
    const other = createRedlock({ clients: nodes.clients, leaseMs: 3_000, waitMs: 0 });
    open.push(other);
    expect(await other.tryAcquire(r)).toBeNull();
    expect(outer.isHeld()).toBe(true);
    await Promise.all(clients.map((c) => ready(c)));
    expect(await outer.release()).toBe("released");
  });

  it("re-entries that each reach a different quorum leave the outer hold on every node once they are released", async () => {
    // With a count per node, each re-entry counted only where it was sent: releasing them deleted the key on
    // the nodes that had counted less, leaving the outer hold on fewer than a quorum while it still said
    // held, and a second owner got in (found by the simulation's --redlock mode).
    const { rl, clients } = await ownRedlock({ leaseMs: 5_000 });
    const r = uniq("rl.reentry-spread");
    const outer = await rl.acquire(r);
    const minority = n - quorum;
    const inner: Handle[] = [];
    for (const down of [0, minority]) {
      const which = Array.from({ length: minority }, (_, i) => down + i);
      await (await connectionKiller(clients, which))();
      inner.push(await rl.acquire(r, { owner: outer.owner }));
      await Promise.all(clients.map((c) => ready(c)));
    }
    expect(inner.map((h) => h.count)).toEqual([2, 3]);
    for (const h of inner) expect(await h.release()).toBe("decremented");

    for (const c of nodes.clients) expect(await lockKeysOn(c, r)).toEqual({ [outer.owner]: "1" });
    const other = createRedlock({ clients: nodes.clients, leaseMs: 3_000, waitMs: 0 });
    open.push(other);
    expect(await other.tryAcquire(r)).toBeNull();
    expect(outer.isHeld()).toBe(true);
    expect(await outer.release()).toBe("released");
  });

  it("a release that reaches only a minority rejects with QuorumError and reaches the rest once they reconnect", async () => {
    const { rl, clients } = await ownRedlock();
    const r = uniq("rl.release-minority");
    const h = await rl.acquire(r, { leaseMs: 5_000 });
    await (await connectionKiller(clients, failing))();
    const err = await h.release().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuorumError);
    expect((err as QuorumError).got).toBe(n - failing.length);

    // Retried in the background on the nodes that never got it: free well before the 5 s lease ends.
    const t0 = performance.now();
    const held = async () => (await Promise.all(nodes.clients.map((c) => c.exists(h.key)))).filter(Boolean);
    await expect.poll(held, { timeout: 2_000, interval: 20 }).toHaveLength(0);
    expect(performance.now() - t0).toBeLessThan(2_000);
    const other = createRedlock({ clients: nodes.clients, leaseMs: 3_000, waitMs: 0 });
    open.push(other);
    const next = await other.tryAcquire(r);
    expect(next).not.toBeNull();
    await next!.release();
  });

  it("a waiter woken by the first node's copy of a release, refused by the others, is woken again by their copies", async () => {
    // The holder's release reaches node 0 at once and the other nodes ~100 ms later (their connections were
    // killed; the background retry sends it once they reconnect). The waiter, which never polls, wakes on
    // node 0's message, tries, is refused by the nodes still held, and must try again when their copies come.
    // Copies of one owner's release used to wake a waiter once (a 250 ms window): it then slept its whole wait.
    const clients = nodes.servers.map((srv) => {
      const c = new Redis(srv.url, { ...failFast, retryStrategy: () => 20 });
      c.on("error", () => {});
      return c;
    });
    own.push(...clients);
    await Promise.all(clients.map((c) => ready(c)));
    const holder = createRedlock({ clients, leaseMs: 1_000 });
    const waiter = createRedlock({
      clients: nodes.clients,
      leaseMs: 1_000,
      retry: { minMs: 5_000, maxMs: 5_000, jitterMs: 0 },
    });
    open.push(holder, waiter);
    const r = uniq("rl.copies");
    const h = await holder.acquire(r);
    const waiting = waiter.acquire(r, { waitMs: 2_000 });
    // Subscribed on every node, and refused once (which marks every node as waited for).
    const channel = `lock-released:{${r}}`;
    await expect
      .poll(async () => {
        const subs = await Promise.all(nodes.clients.map((c) => c.pubsub("NUMSUB", channel)));
        return subs.every((x) => Number(x[1]) === 1);
      })
      .toBe(true);
    await expect
      .poll(async () =>
        (await Promise.all(nodes.clients.map((c) => c.hexists(h.key, "~waiters")))).every(Boolean),
      )
      .toBe(true);
    const late = Array.from({ length: n - 1 }, (_, i) => i + 1);
    await (await connectionKiller(clients, late))();
    await h.release().catch(() => {}); // QuorumError: only node 0 answered; the rest follow in the background
    const start = performance.now();
    const got = await waiting;
    expect(performance.now() - start).toBeLessThan(1_000);
    await got.release();
  });

  it("renewMany applies a quorum's refusal at once while another lock of the batch waits on a slow node", async () => {
    const slow = n - 1;
    const rl = createRedlock({ clients: nodes.clients, leaseMs: 1_500, nodeTimeoutMs: 150 });
    open.push(rl);
    const [r1, r2] = [uniq("rl.renew-refused"), uniq("rl.renew-undecided")];
    // Taken together, so the watchdog renews them in one batch.
    const [h1, h2] = (await Promise.all([rl.acquire(r1), rl.acquire(r2)])) as [Handle, Handle];
    const lostAt = new Map<Handle, number>();
    for (const h of [h1, h2]) h.signal.addEventListener("abort", () => lostAt.set(h, performance.now()));
    // r1: gone from n - quorum + 1 nodes, so a quorum refuses it whatever the slow node says.
    for (let i = 0; i <= n - quorum; i++) await nodes.clients[i]!.del(h1.key);
    // r2: gone from n - quorum nodes that answer; with the slow node silent it is undecided.
    for (let i = 0; i < n - quorum; i++) await nodes.clients[i]!.del(h2.key);
    await nodes.servers[slow]!.kill("SIGSTOP");

    await expect.poll(() => lostAt.has(h1), { timeout: 2_000, interval: 10 }).toBe(true);
    expect(h1.signal.reason).toBeInstanceOf(LockLostError);
    // Refused at a renewal (the first, about lease/3 after acquiring), not lost at the lease's end.
    expect((h1.signal.reason as LockLostError).reason).toBe("renew-refused");
    expect(h2.isHeld()).toBe(true);
    await expect.poll(() => lostAt.has(h2), { timeout: 3_000, interval: 10 }).toBe(true);
    expect((h2.signal.reason as LockLostError).reason).toBe("deadline");
  });
});
