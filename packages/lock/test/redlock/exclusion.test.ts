import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedlock, type Locks } from "../../src/index.js";
import { assertNoOverlap, type Hold, sleep, uniq } from "../helpers.js";
import { type Nodes, nodeClient, ready, startNodes } from "../redlock-helpers.js";

const INSTANCES = 4;

describe.each([3, 5])("Redlock over %i nodes: mutual exclusion", (n) => {
  let nodes: Nodes;
  let conns: Redis[][] = [];
  beforeAll(async () => {
    nodes = await startNodes(n);
    // One set of connections per instance, as separate processes would have, each listing the nodes
    // rotated: their requests reach the nodes in different orders, so votes really split.
    conns = Array.from({ length: INSTANCES }, (_, i) => {
      const cs = nodes.servers.map(nodeClient);
      return [...cs.slice(i % n), ...cs.slice(0, i % n)];
    });
    await Promise.all(conns.flat().map((c) => ready(c)));
  });
  afterAll(async () => {
    for (const c of conns.flat()) c.disconnect();
    await nodes?.close();
  });

  it(`never lets two owners hold at once under 100 concurrent tasks from ${INSTANCES} Locks instances`, async () => {
    const instances: Locks[] = conns.map((clients) =>
      createRedlock({ clients, leaseMs: 800, waitMs: 30_000 }),
    );
    const r = uniq("rl.exclusion");
    const holds: Hold[] = [];
    try {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          instances[i % INSTANCES]!.withLock(r, async (lock) => {
            const start = performance.now();
            await sleep(1);
            holds.push({ owner: lock.owner, start, end: performance.now() });
          }),
        ),
      );
    } finally {
      for (const rl of instances) await rl.close();
    }
    expect(holds).toHaveLength(100);
    expect(new Set(holds.map((h) => h.owner)).size).toBe(100);
    assertNoOverlap(holds);
    for (const c of nodes.clients) expect(await c.exists(`lock:{${r}}`)).toBe(0);
  });
});
