import { createLocks } from "@lockyard/lock";
import type { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startCluster } from "../../../../scripts/lib/cluster.mjs";
import { uid } from "../../test/context.js";
import { LockEvents } from "../../test/lock-events.js";
import { watchAll } from "../../test/runs.js";
import { testServices } from "../../test/services.js";
import { createContextInner } from "../context.js";
import { cleanup } from "../jobs/scheduler.js";
import { createRedis, targetString, waitUntilReady } from "../redis.js";
import { createCaller } from "../root.js";
import { barrierKey, stockKey, stockResource } from "../stock/keys.js";
import type { LocksSnapshotEvent, ScenarioEvent } from "../types.js";

// The API on a real 3-master Cluster (one replica each): two "instances", each with its own Cluster client
// and Locks, as two API processes would have.
let cluster: Awaited<ReturnType<typeof startCluster>>;
const instances: Awaited<ReturnType<typeof instance>>[] = [];

async function instance(name: string) {
  const target = { topology: "cluster" as const, nodes: cluster.nodes.slice(0, 2) };
  const redis = createRedis(target, { name });
  if (!(await waitUntilReady(redis, 10_000))) throw new Error("cluster client not ready");
  const locks = createLocks({ redis, instanceId: name, leaseMs: 2_000 });
  const ctx = await createContextInner(
    testServices({
      redis,
      locks,
      // The demo's child processes connect with redisUrl: the Cluster's seed nodes, as the API passes them.
      config: {
        instanceId: name,
        redisTopology: "cluster",
        redisUrl: targetString(target),
        orderProcessingMs: 50,
      },
    }),
  );
  return {
    redis,
    caller: createCaller(ctx),
    ctx,
    close: async () => {
      ctx.lockFeed.close();
      await locks.close();
      redis.disconnect();
    },
  };
}

beforeAll(async () => {
  cluster = await startCluster({ masters: 3, replicas: 1 });
  instances.push(await instance("api-c1"), await instance("api-c2"));
}, 60_000);

afterAll(async () => {
  for (const i of instances) await i.close();
  await cluster?.stop();
});

const slot = async (key: string) =>
  Number(await (instances[0]!.redis as unknown as Cluster).call("CLUSTER", "KEYSLOT", key));

describe("the API on a Redis Cluster", () => {
  it("keeps a product's lock, fence, stock and barrier in one slot, and products spread over the masters", async () => {
    const products = Array.from({ length: 12 }, (_, i) => `p${i}`);
    for (const p of products) {
      const r = stockResource(p);
      const slots = await Promise.all(
        [`lock:{${r}}`, `fence:{${r}}`, stockKey(p), barrierKey(p)].map((k) => slot(k)),
      );
      expect(new Set(slots).size, p).toBe(1);
    }
    const masters = (instances[0]!.redis as unknown as Cluster).nodes("master");
    const owners = await Promise.all(
      products.map(async (p) => {
        const s = await slot(stockKey(p));
        const ranges = (await (instances[0]!.redis as unknown as Cluster).cluster("SLOTS")) as unknown as [
          number,
          number,
          [string, number],
        ][];
        return ranges.find(([a, b]) => s >= a && s <= b)?.[2][1];
      }),
    );
    expect(masters).toHaveLength(3);
    expect(new Set(owners).size).toBe(3);
  });

  it("sells exactly the stock in redis mode across two instances, and the fence is the last holder's", async () => {
    const productId = uid("cl");
    await instances[0]!.caller.stock.reset({ productId, qty: 15 });
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        instances[i % 2]!.caller.stock.deduct({ productId, mode: "redis", workMs: 2 }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(15);
    expect(results.filter((r) => !r.ok && r.reason === "sold-out")).toHaveLength(25);
    const stock = await instances[1]!.caller.stock.get({ productId });
    expect(stock.qty).toBe(0);
    const tokens = results.flatMap((r) => (r.ok && r.token !== null ? [r.token] : []));
    expect(new Set(tokens).size).toBe(15);
    expect(stock.fence).toBeGreaterThanOrEqual(Math.max(...tokens));
  });

  it("runs the atomic and unsafe modes on the Cluster (none oversells when its reads overlap)", async () => {
    const productId = uid("cl");
    await instances[0]!.caller.stock.reset({ productId, qty: 5 });
    const atomic = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        instances[i % 2]!.caller.stock.deduct({ productId, mode: "atomic" }),
      ),
    );
    expect(atomic.filter((r) => r.ok)).toHaveLength(5);
    await instances[0]!.caller.stock.reset({ productId, qty: 1 });
    const none = await Promise.all(
      Array.from({ length: 2 }, () =>
        instances[0]!.caller.stock.deduct({ productId, mode: "none", workMs: 50 }),
      ),
    );
    expect(none.every((r) => r.ok)).toBe(true);
    expect((await instances[0]!.caller.stock.get({ productId })).qty).toBe(-1);
  });

  it("creates an order once across instances, replays it, lists it, and the cleanup job runs", async () => {
    const orderId = uid("o");
    const attempts = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        instances[i % 2]!.caller.order.submit({ orderId, productId: "1001", quantity: 1 }),
      ),
    );
    const created = attempts.filter((a) => a.status === "fulfilled" && !a.value.replayed);
    expect(created).toHaveLength(1);
    for (const a of attempts) {
      if (a.status === "rejected") expect((a.reason as { code?: string }).code).toBe("CONFLICT");
    }
    const again = await instances[1]!.caller.order.submit({ orderId, productId: "1001", quantity: 1 });
    expect(again.replayed).toBe(true);
    const { orders } = await instances[0]!.caller.order.list({ limit: 50 });
    expect(orders.map((o) => o.orderId)).toContain(orderId);
    expect(await cleanup({ redis: instances[0]!.redis, orderRetentionMs: 24 * 3_600_000 })).toBe(0);
  });

  it("system.info says cluster and lists its 3 masters and 3 replicas", async () => {
    const info = await instances[0]!.caller.system.info();
    expect(info.redis).toMatchObject({ mode: "cluster", reachable: true, masters: 3, replicas: 3 });
    const ports = cluster.nodes.map((n) => `127.0.0.1:${n.port}`).sort();
    expect(info.redis.nodes.map((n) => n.address).sort()).toEqual(ports);
    for (const r of info.redis.nodes.filter((n: { role: string }) => n.role === "replica"))
      expect(ports).toContain(r.master);
  });

  it("lists and watches locks held on every master", async () => {
    const held = await Promise.all(
      Array.from({ length: 9 }, (_, i) => instances[i % 2]!.ctx.locks.acquire(`cl-view:${uid()}:${i}`)),
    );
    try {
      const listed = await instances[0]!.caller.locks.list({ prefix: "cl-view:" });
      expect(listed.locks.map((l) => l.resource).sort()).toEqual(held.map((h) => h.resource).sort());
      const abort = new AbortController();
      const caller = createCaller(instances[1]!.ctx, { signal: abort.signal });
      const events = new LockEvents(await caller.locks.watch({ prefix: "cl-view:" }), abort);
      try {
        const first = (await events.next()) as LocksSnapshotEvent;
        expect(first.kind).toBe("snapshot");
        expect(first.locks.map((l) => l.resource).sort()).toEqual(held.map((h) => h.resource).sort());
        // One keyspace-notification observer per master.
        expect(instances[1]!.ctx.lockFeed.status.connections).toBe(3);
        // Changes on any master arrive as deltas.
        for (const h of held.slice(0, 3)) {
          const gone = events.delta(h.key);
          await h.release();
          expect((await gone).removed).toContain(h.key);
        }
      } finally {
        await events.close();
      }
    } finally {
      await Promise.all(held.map((h) => h.release().catch(() => undefined)));
    }
  });

  it("shows semaphores and read-write locks from every master, runs the read-write demo and two-product orders", async () => {
    const base = `cl-kinds:${uid()}`;
    const locks = instances[0]!.ctx.locks;
    const held = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? locks.semaphore(`${base}:${i}`, 2).acquire()
          : locks.readWrite(`${base}:${i}`).read.acquire(),
      ),
    );
    try {
      const expected = held.map((h, i) => [h.resource, i % 2 === 0 ? "semaphore" : "read-write"]).sort();
      const listed = await instances[1]!.caller.locks.list({ prefix: base });
      expect(listed.locks.map((l) => [l.resource, l.kind]).sort()).toEqual(expected);
      for (const l of listed.locks) {
        if (l.kind === "semaphore") expect(l.permits).toEqual({ used: 1, total: 2 });
        else expect(l.readWrite).toEqual({ readers: 1, writer: null, writerWaiting: false });
      }
      const slots = new Set(await Promise.all(listed.locks.map((l) => slot(l.key))));
      expect(slots.size).toBeGreaterThan(1);
      const abort = new AbortController();
      const caller = createCaller(instances[1]!.ctx, { signal: abort.signal });
      const events = new LockEvents(await caller.locks.watch({ prefix: base }), abort);
      try {
        const first = (await events.next()) as LocksSnapshotEvent;
        expect(first.locks.map((l) => [l.resource, l.kind]).sort()).toEqual(expected);
        const gone = events.delta(held[1]!.key);
        await held[1]!.release();
        expect((await gone).removed).toContain(held[1]!.key);
      } finally {
        await events.close();
      }
    } finally {
      await Promise.all(held.map((h) => h.release().catch(() => undefined)));
    }

    const rw = await instances[1]!.caller.demo.readWrite.run({ timeScale: 0.5 });
    expect(rw.verdict).toMatchObject({ ok: true });

    const [a, b] = [uid("ka"), uid("kb")];
    for (const p of [a, b]) await instances[0]!.caller.stock.reset({ productId: p, qty: 10 });
    const orders = await Promise.all([
      instances[0]!.caller.order.submit({ orderId: uid("o"), items: [{ productId: a }, { productId: b }] }),
      instances[1]!.caller.order.submit({ orderId: uid("o"), items: [{ productId: b }, { productId: a }] }),
    ]);
    expect(orders.map((o) => o.replayed)).toEqual([false, false]);
    for (const p of [a, b]) expect((await instances[0]!.caller.stock.get({ productId: p })).qty).toBe(8);
  });

  it("runs every demo scenario on the Cluster (crash and fencing in child processes on the seed nodes)", async () => {
    for (const name of ["watchdog", "reentrancy", "misdelete", "fencing", "crash"] as const) {
      const { runId } = await instances[0]!.caller.demo.scenario.start({ name, timeScale: 0.25 });
      const events = (await watchAll(instances[0]!.caller, runId)).map((e) => e.event as ScenarioEvent);
      expect(events.at(-1), name).toMatchObject({ type: "done", ok: true });
    }
  });

  // Last: it takes the whole Cluster down.
  it("answers 503 at once while every node is down, instead of queueing requests with no timeout", async () => {
    const productId = uid("down");
    await instances[0]!.caller.stock.reset({ productId, qty: 5 });
    await Promise.all(cluster.servers.map((s) => s.kill("SIGKILL")));
    await vi.waitFor(() => expect(instances[0]!.redis.status).not.toBe("ready"), { timeout: 10_000 });
    for (const call of [
      () => instances[0]!.caller.stock.get({ productId }),
      () => instances[0]!.caller.stock.deduct({ productId, mode: "redis" }),
      () => instances[0]!.caller.order.submit({ orderId: uid("o"), productId, quantity: 1 }),
    ]) {
      const err = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect((err as { code?: string } | null)?.code).toBe("SERVICE_UNAVAILABLE");
    }
  });
});
