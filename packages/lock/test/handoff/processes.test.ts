// Issue 13: the Redis-side queue and handoff across real processes (child_process.fork, one connection each).
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queueKeyOf } from "../../src/resource.js";
import { workers } from "../fork-worker.js";
import { connect, type Hold, makeLocks, uniq } from "../helpers.js";

const WORKER = fileURLToPath(new URL("./worker.mjs", import.meta.url));
type Message = { op: string; holds?: (Hold & { token: number; inside: number; seq: number })[] };

let redis: Redis;
const { spawn, killAll } = workers<Message>(WORKER);
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  killAll();
  redis.disconnect();
});

describe("handoff across processes", () => {
  it("4 processes, 3 callers each: never two holds at once as Redis sees it, tokens rise in Redis's order", async () => {
    const resource = uniq("xproc");
    const workers = Array.from({ length: 4 }, spawn);
    await Promise.all(workers.map((w) => w.next("ready")));
    const insideKey = `inside:${resource}`;
    const seqKey = `seq:${resource}`;
    for (const w of workers)
      w.child.send({ op: "contend", resource, insideKey, seqKey, rounds: 10, parallel: 3, holdMs: 1 });
    const done = await Promise.all(workers.map((w) => w.next("done")));
    const holds = done.flatMap((d) => d.holds!);
    expect(holds).toHaveLength(4 * 3 * 10);
    // Never two holds counted in at once, as Redis saw it.
    expect(holds.filter((h) => h.inside !== 1)).toEqual([]);
    const inRedisOrder = [...holds].sort((a, b) => a.seq - b.seq);
    for (let i = 1; i < inRedisOrder.length; i++)
      expect(inRedisOrder[i]!.token).toBeGreaterThan(inRedisOrder[i - 1]!.token);
    await redis.del(insideKey, seqKey);
    // Nothing is left queued once everyone is served.
    expect(await redis.exists(queueKeyOf(`lock:{${resource}}`))).toBe(0);
    for (const w of workers) w.child.kill();
  });

  it("a SIGKILLed waiter at the head of the queue delays the next one by at most one queue lease", async () => {
    const resource = uniq("killed-head");
    const key = `lock:{${resource}}`;
    const retry = { maxMs: 200, jitterMs: 20 };
    const queueLeaseMs = 3 * (retry.maxMs + retry.jitterMs);
    const { locks: holder } = makeLocks(redis, { instanceId: "holder", retry });
    const other = connect();
    const { locks: next } = makeLocks(other, { instanceId: "next", retry });
    const held = await holder.acquire(resource);
    // The doomed waiter queues first, then this process's waiter behind it.
    const doomed = spawn();
    await doomed.next("ready");
    doomed.child.send({ op: "wait", resource, queueKey: queueKeyOf(key) });
    await doomed.next("queued");
    const waiting = next.acquire(resource, { waitMs: 10_000 });
    await expect.poll(async () => (await redis.lrange(queueKeyOf(key), 0, -1)).length).toBe(2);
    doomed.child.kill("SIGKILL");
    await new Promise((r) => doomed.child.once("exit", r));
    // Its entry is still alive: the release hands the lock to the dead waiter, which never adopts it.
    const releasedAt = performance.now();
    expect(await held.release()).toBe("released");
    expect(await redis.hget(key, "~handed")).toMatch(/^worker-/);
    const h = await waiting;
    const delay = performance.now() - releasedAt;
    // The claim runs out within one queue lease, and the next waiter's re-check (≤ retry.maxMs + jitter) takes it.
    expect(delay).toBeLessThan(queueLeaseMs + retry.maxMs + retry.jitterMs + 150);
    expect(h.isHeld()).toBe(true);
    await h.release();
    await holder.close();
    await next.close();
    other.disconnect();
  });
});
