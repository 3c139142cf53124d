import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRedlock, type Locks, LockTimeoutError } from "../../src/index.js";
import { releaseChannel } from "../../src/resource.js";
import { commandStats, sleep, uniq } from "../helpers.js";
import { type Nodes, nodeClient, ready, startNodes } from "../redlock-helpers.js";

// A holder on a quorum of nodes but not on all of them (a node restarted and forgot it, or lost a race)
// leaves a node that every waiter's attempt wins. Each attempt is then refused by the holder's quorum and
// undone on that node. The undo frees no lock, so it must wake no one: announced, it sent the waiters to try
// again at once, every 2-4 ms (240 attempts a second by one waiter) for as long as the holder held.
describe("Redlock over 3 nodes: undoing an attempt that the holder's quorum refused", () => {
  let nodes: Nodes;
  const open: Locks[] = [];
  const own: Redis[] = [];
  const redlock = () => {
    const rl = createRedlock({ clients: nodes.clients, leaseMs: 5_000 });
    open.push(rl);
    return rl;
  };

  beforeAll(async () => {
    nodes = await startNodes(3);
  });
  afterEach(async () => {
    for (const rl of open.splice(0)) await rl.close();
    for (const c of own.splice(0)) c.disconnect();
  });
  afterAll(async () => {
    await nodes?.close();
  });

  /** Messages published on node 0's release channel of `resource` while `fn` runs, and node 0's script calls. */
  const onNodeZero = async <T>(resource: string, fn: () => Promise<T>) => {
    const sub = nodeClient(nodes.servers[0]!);
    own.push(sub);
    await ready(sub);
    const messages: string[] = [];
    sub.on("message", (_ch: string, m: string) => messages.push(m));
    await sub.subscribe(releaseChannel(resource));
    const scripts = (s: Record<string, number>) => (s.evalsha ?? 0) + (s.eval ?? 0);
    const before = scripts(await commandStats(nodes.clients[0]!));
    const value = await fn();
    const calls = scripts(await commandStats(nodes.clients[0]!)) - before;
    await sub.ping();
    return { value, messages, calls };
  };

  it("wakes no waiter: two waiters try a few times a second, not hundreds, and each times out", async () => {
    const [holder, waiting] = [redlock(), redlock()];
    const r = uniq("rl.undo.quiet");
    const h = await holder.acquire(r);
    // Node 0 forgets the lock (a restart without persistence): the holder keeps nodes 1 and 2, a quorum.
    await nodes.clients[0]!.del(`lock:{${r}}`);

    const { value, messages, calls } = await onNodeZero(r, () =>
      Promise.all(
        [0, 1].map(() =>
          waiting.acquire(r, { waitMs: 1_000 }).then(
            () => "acquired",
            (e: unknown) => e,
          ),
        ),
      ),
    );
    for (const outcome of value) expect(outcome).toBeInstanceOf(LockTimeoutError);
    expect(messages).toEqual([]);
    // Waking on each undo made this about 480 in the second; the retry timer (retry.maxMs 500) makes it a few.
    expect(calls).toBeLessThan(30);
    expect(h.isHeld()).toBe(true);
    await h.release();
  });

  it("the holder's release still wakes a waiter that was refused by its quorum", async () => {
    const holder = redlock();
    // Its retry timer would first fire after its wait ended: only a message can get it the lock in time.
    const waiting = createRedlock({
      clients: nodes.clients,
      leaseMs: 5_000,
      retry: { minMs: 4_000, maxMs: 4_000 },
    });
    open.push(waiting);
    const r = uniq("rl.undo.wake");
    const h = await holder.acquire(r);
    await nodes.clients[0]!.del(`lock:{${r}}`);
    const waiter = waiting.acquire(r, { waitMs: 3_000 });
    await sleep(300);
    await h.release();
    const w = await waiter;
    expect(w.isHeld()).toBe(true);
    await w.release();
  });
});
