import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRedlock, LockLostError, type Locks } from "../../src/index.js";
import { sleep, uniq } from "../helpers.js";
import { type Nodes, ready, startNodes } from "../redlock-helpers.js";

// What packages/lock/README.md ("Redlock › Node restarts") promises: a node restarted without persistence
// forgets its locks. One restart is harmless while the lock is on every node; a lock held by exactly a
// quorum can be handed to a second owner, and the first learns it at its next renewal; keeping the node
// down for the longest lease before it rejoins (a delayed restart) closes that gap.
describe.each([3, 5])("Redlock over %i nodes: node restarts", (n) => {
  const quorum = Math.floor(n / 2) + 1;
  let nodes: Nodes;
  const open: Locks[] = [];
  const redlock = () => {
    const rl = createRedlock({ clients: nodes.clients, leaseMs: 600, waitMs: 0 });
    open.push(rl);
    return rl;
  };
  const restartNow = async (i: number) => {
    await nodes.servers[i]!.kill();
    await nodes.servers[i]!.restart();
    await ready(nodes.clients[i]!);
  };
  /** Acquires while the first n - quorum nodes are down, so exactly a quorum holds it; then revives them. */
  const holdOnExactlyAQuorum = async (rl: Locks, r: string, leaseMs: number) => {
    for (const s of nodes.servers.slice(0, n - quorum)) await s.kill();
    const h = await rl.acquire(r, { leaseMs });
    await nodes.reviveAll();
    return h;
  };

  beforeAll(async () => {
    nodes = await startNodes(n);
  });
  afterEach(async () => {
    for (const rl of open.splice(0)) await rl.close();
    await nodes.reviveAll();
  });
  afterAll(async () => {
    await nodes?.close();
  });

  it("a restarted node forgets the lock, yet one restart keeps it exclusive while every node held it", async () => {
    const [a, b] = [redlock(), redlock()];
    const r = uniq("rl.restart.one");
    const h = await a.acquire(r);
    await restartNow(0);
    expect(await nodes.clients[0]!.exists(`lock:{${r}}`)).toBe(0);

    expect(await b.tryAcquire(r)).toBeNull();
    // B's vote on the restarted node was undone, and renewals never re-create a missing key.
    expect(await nodes.clients[0]!.exists(`lock:{${r}}`)).toBe(0);
    expect(await h.renew()).toBe(true);
    expect(await nodes.clients[0]!.exists(`lock:{${r}}`)).toBe(0);
    expect(h.isHeld()).toBe(true);
    expect(await h.release()).toBe("released");
  });

  it("caveat: a restart of a node of an exact quorum lets a second owner in; the first learns at its next renewal", async () => {
    const [a, b] = [redlock(), redlock()];
    const r = uniq("rl.restart.caveat");
    const ha = await holdOnExactlyAQuorum(a, r, 800);
    await restartNow(n - quorum);

    const hb = await b.tryAcquire(r, { leaseMs: 800 });
    expect(hb).not.toBeNull();
    // Two owners at once: this is the unsafety the docs describe for restarts without persistence.
    expect(ha.isHeld()).toBe(true);
    expect(hb!.isHeld()).toBe(true);

    expect(await ha.renew()).toBe(false);
    expect(ha.isHeld()).toBe(false);
    expect(ha.signal.reason).toBeInstanceOf(LockLostError);
    expect((ha.signal.reason as LockLostError).reason).toBe("renew-refused");
    expect(await hb!.release()).toBe("released");
  });

  it("a delayed restart (the node stays down for the lease) never hands out a lock that is still valid", async () => {
    const [a, b] = [redlock(), redlock()];
    const r = uniq("rl.restart.delayed");
    const leaseMs = 400;
    const ha = await holdOnExactlyAQuorum(a, r, leaseMs);
    const validUntil = performance.now() + leaseMs;
    await nodes.servers[n - quorum]!.kill();

    expect(await b.tryAcquire(r, { leaseMs })).toBeNull();
    await sleep(leaseMs + 50);
    await nodes.servers[n - quorum]!.restart();
    await ready(nodes.clients[n - quorum]!);

    expect(ha.isHeld()).toBe(false);
    const hb = await b.tryAcquire(r, { leaseMs });
    expect(hb).not.toBeNull();
    expect(performance.now()).toBeGreaterThan(validUntil);
    await hb!.release();
  });
});
