import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRedlock, LockLostError, type Locks, LockTimeoutError, QuorumError } from "../../src/index.js";
import { sleep, uniq } from "../helpers.js";
import { lockKeysOn, type Nodes, startNodes } from "../redlock-helpers.js";

describe.each([3, 5])("Redlock over %i nodes", (n) => {
  const quorum = Math.floor(n / 2) + 1;
  let nodes: Nodes;
  const open: Locks[] = [];
  const redlock = (opts: Partial<Parameters<typeof createRedlock>[0]> = {}) => {
    const rl = createRedlock({ clients: nodes.clients, leaseMs: 600, waitMs: 2_000, ...opts });
    open.push(rl);
    return rl;
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

  it("acquires on every node with a null token, re-enters and releases everywhere", async () => {
    const rl = redlock();
    const r = uniq("rl.basic");
    const h = await rl.acquire(r);
    expect(h.token).toBeNull();
    expect(h.count).toBe(1);
    for (const c of nodes.clients) expect(await lockKeysOn(c, r)).toEqual({ [h.owner]: "1" });
    // Redlock keeps no fence: a counter on independent nodes would not be monotonic.
    for (const c of nodes.clients) expect(await c.exists(`fence:{${r}}`)).toBe(0);

    await rl
      .withLock(
        r,
        async (outer) => {
          expect(outer.owner).not.toBe(h.owner);
        },
        { waitMs: 0 },
      )
      .then(
        () => expect.unreachable("a second owner got the lock"),
        (e: unknown) => expect(e).toBeInstanceOf(LockTimeoutError),
      );

    const inner = await rl.acquire(r, { owner: h.owner });
    expect(inner.count).toBe(2);
    // Re-entry is counted in the process; a node holds each owner once (redlock/holds.ts).
    for (const c of nodes.clients) expect((await lockKeysOn(c, r))[h.owner]).toBe("1");
    const [info] = await rl.list({ match: r });
    expect(info).toMatchObject({ resource: r, owners: [{ owner: h.owner, count: 2 }], leaseMs: 600 });
    expect(info!.pttlMs).toBeGreaterThan(0);
    expect(info!.pttlMs).toBeLessThanOrEqual(600);
    expect(info!.token).toBeUndefined();

    expect(await inner.release()).toBe("decremented");
    expect(await h.release()).toBe("released");
    for (const c of nodes.clients) expect(await c.exists(`lock:{${r}}`)).toBe(0);
  });

  it("a re-entry of a hold a quorum lost, or one whose lease ran out unrenewed, rejects with LockLostError", async () => {
    // Granting it afresh instead would hand the owner a new hold that the outer hold's release then deletes.
    const rl = redlock();
    const r = uniq("rl.reenter-lost");
    const outer = await rl.acquire(r, { leaseMs: 5_000 });
    for (const c of nodes.clients) await c.del(outer.key);
    const refused = await rl.acquire(r, { owner: outer.owner }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockLostError);
    expect((refused as LockLostError).reason).toBe("renew-refused");
    for (const c of nodes.clients) expect(await c.exists(outer.key)).toBe(0);
    // Lost stays lost for this owner until its holds are given back.
    expect(await rl.acquire(r, { owner: outer.owner }).catch((e: unknown) => e)).toBeInstanceOf(
      LockLostError,
    );
    expect(await outer.release()).toBe("not-owner");

    const r2 = uniq("rl.reenter-expired");
    const fixed = await rl.acquire(r2, { leaseMs: 150 });
    await sleep(200);
    const late = await rl.acquire(r2, { owner: fixed.owner }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(LockLostError);
    expect((late as LockLostError).reason).toBe("expired");
    for (const c of nodes.clients) expect(await c.exists(fixed.key)).toBe(0);
  });

  it("re-enters inside withLock through the scope", async () => {
    const rl = redlock();
    const r = uniq("rl.scope");
    const counts = await rl.withLock(r, async (outer) => {
      const nested = await rl.withLock(r, async (l) => [outer.count, l.count, l.owner === outer.owner]);
      return nested;
    });
    expect(counts).toEqual([1, 2, true]);
    for (const c of nodes.clients) expect(await c.exists(`lock:{${r}}`)).toBe(0);
  });

  it("wakes a waiter on release, with subscriptions on every node", async () => {
    // Fallback retries only every 5 s: within its 2 s wait the waiter gets the lock only if woken.
    const holderRl = redlock();
    const waiterRl = redlock({ retry: { minMs: 5_000, maxMs: 5_000, jitterMs: 0 } });
    const r = uniq("rl.wake");
    const h = await holderRl.acquire(r);
    const waiting = waiterRl.acquire(r, { waitMs: 2_000 });
    await new Promise((res) => setTimeout(res, 150));
    await h.release();
    const w = await waiting;
    expect(w.isHeld()).toBe(true);
    await w.release();
  });

  it(`keeps working with a minority (${n - quorum} of ${n}) killed: acquire, renew, watchdog, wake-up`, async () => {
    for (const s of nodes.servers.slice(0, n - quorum)) await s.kill();
    const rl = redlock({ leaseMs: 300, retry: { minMs: 5_000, maxMs: 5_000, jitterMs: 0 } });
    const r = uniq("rl.minority");
    const lost: unknown[] = [];
    const h = await rl.acquire(r);
    h.signal.addEventListener("abort", () => lost.push(h.signal.reason));
    expect(await h.renew()).toBe(true);
    // Three leases: only watchdog renewals on a quorum keep it.
    await new Promise((res) => setTimeout(res, 900));
    expect(lost).toEqual([]);
    expect(h.isHeld()).toBe(true);
    for (const c of nodes.clients.slice(n - quorum)) expect((await lockKeysOn(c, r))[h.owner]).toBe("1");

    const waiting = rl.acquire(r, { waitMs: 2_000 });
    await new Promise((res) => setTimeout(res, 100));
    expect(await h.release()).toBe("released");
    await (await waiting).release();
  });

  it("a waiter that subscribed while a node was down is subscribed there too once the node returns", async () => {
    await nodes.servers[0]!.kill();
    const rl = redlock({ retry: { minMs: 5_000, maxMs: 5_000, jitterMs: 0 } });
    const r = uniq("rl.resubscribe");
    const h = await rl.acquire(r);
    const waiting = rl.acquire(r, { waitMs: 5_000 });
    await sleep(1_200); // past the subscribe's own wait and the node client's reconnect attempts
    await nodes.reviveAll();
    const subscribers = async () =>
      Number(((await nodes.clients[0]!.pubsub("NUMSUB", `lock-released:{${r}}`)) as unknown[])[1]);
    await expect.poll(subscribers, { timeout: 3_000 }).toBe(1);
    expect(await h.release()).toBe("released");
    await (await waiting).release();
  });

  it(`fails with QuorumError when a majority (${n - quorum + 1} of ${n}) is down, leaving no lock keys`, async () => {
    const live = nodes.clients.slice(n - quorum + 1);
    for (const s of nodes.servers.slice(0, n - quorum + 1)) await s.kill();
    const rl = redlock();
    const r = uniq("rl.majority");
    const err = await rl.acquire(r).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuorumError);
    expect((err as QuorumError).name).toBe("QuorumError");
    expect((err as QuorumError).needed).toBe(quorum);
    expect(await rl.tryAcquire(r).catch((e: unknown) => e)).toBeInstanceOf(QuorumError);
    // The live nodes did say yes; the failed acquisition undid that.
    for (const c of live) expect(await c.exists(`lock:{${r}}`)).toBe(0);
  });

  it("QuorumError's got counts the nodes that answered, refusals included", async () => {
    const r = uniq("rl.majority-held");
    const h = await redlock().acquire(r);
    for (const s of nodes.servers.slice(0, n - quorum + 1)) await s.kill();
    // The live nodes answer "held by another owner": answers all the same, too few of them.
    const err = await redlock()
      .acquire(r)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "QuorumError", needed: quorum, got: quorum - 1 });
    expect(h.isHeld()).toBe(true);
  });

  it("loses a held lock when the majority goes away", async () => {
    const rl = redlock({ leaseMs: 300 });
    const r = uniq("rl.lose");
    const h = await rl.acquire(r);
    const t0 = performance.now();
    for (const s of nodes.servers.slice(0, n - quorum + 1)) await s.kill();
    const reason = await new Promise<unknown>((res) =>
      h.signal.addEventListener("abort", () => res(h.signal.reason), { once: true }),
    );
    expect(reason).toBeInstanceOf(LockLostError);
    // Renewals can no longer reach a quorum; the lock counts as lost by its local deadline (lease - drift).
    expect(performance.now() - t0).toBeLessThan(300 + 1_000);
    expect(h.isHeld()).toBe(false);
  });

  it("does not wait for a paused node longer than nodeTimeoutMs", async () => {
    await nodes.servers[0]!.kill("SIGSTOP");
    const rl = redlock({ nodeTimeoutMs: 100 });
    const r = uniq("rl.paused");
    const h = await rl.acquire(r, { leaseMs: 800 });
    expect(h.isHeld()).toBe(true);
    expect(await h.release()).toBe("released");
  });
});

describe("createRedlock options", () => {
  it("refuses a quorum below a majority, duplicate clients and a Cluster", async () => {
    const nodes = await startNodes(3);
    try {
      const [a, b, c] = nodes.clients as [never, never, never];
      expect(() => createRedlock({ clients: [a, b, c], quorum: 1 })).toThrow(/quorum/);
      expect(() => createRedlock({ clients: [a, b, c], quorum: 4 })).toThrow(/quorum/);
      expect(() => createRedlock({ clients: [a, a, b] })).toThrow(/clients/);
      expect(() => createRedlock({ clients: [] })).toThrow(/clients/);
      expect(() => createRedlock({ clients: [a, b, c], driftFactor: -1 })).toThrow(/driftFactor/);
      expect(() => createRedlock({ clients: [{ isCluster: true, defineCommand() {} } as never] })).toThrow(
        /Cluster/,
      );
      const rl = createRedlock({ clients: [a, b, c], quorum: 3 });
      await rl.close();
    } finally {
      await nodes.close();
    }
  });
});
