// "released" before the next owner's "acquired", when both replies come back in one socket read. The two
// commands are made to leave in one write (the socket corked by hand until both are queued), so Redis runs
// the release first and answers both at once; the events must keep Redis's order whatever path each
// reply's promise takes (the batched acquire, or the attempt with `reads`).
import type { Writable } from "node:stream";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLocks, type LockEvent, type Locks, type ReadsFn } from "../../src/index.js";
import { connect, uniq } from "../helpers.js";

let redis: Redis;
let a: Locks;
let b: Locks;
const events: LockEvent[] = [];
beforeAll(async () => {
  redis = connect();
  await redis.ping();
  a = createLocks({ redis, instanceId: "order-a", onEvent: (e) => events.push(e) });
  b = createLocks({ redis, instanceId: "order-b", onEvent: (e) => events.push(e) });
});
afterAll(async () => {
  await a.close();
  await b.close();
  redis.disconnect();
});

/** Commands written to the socket and not answered yet (ioredis's internal queue). */
const unanswered = () => (redis as unknown as { commandQueue: { length: number } }).commandQueue.length;

describe("event order across one Redis reply", () => {
  it.each([
    ["batched acquire", undefined],
    ["acquire with reads", ((c) => c.get("order:unrelated")) satisfies ReadsFn],
  ] as const)("%s: the release's event comes first", async (_, reads) => {
    const r = uniq("order");
    const held = await a.acquire(r);
    events.length = 0;
    const stream = (redis as unknown as { stream: Writable & { on: Writable["on"] } }).stream;
    let chunks = 0;
    const count = () => {
      chunks++;
    };
    stream.cork();
    const released = held.release();
    await vi.waitFor(() => expect(unanswered()).toBe(1), { interval: 1 });
    const taken = b.tryAcquire(r, reads ? { reads } : {});
    await vi.waitFor(() => expect(unanswered()).toBe(reads ? 3 : 2), { interval: 1 });
    stream.on("data", count);
    stream.uncork();
    const [result, h] = await Promise.all([released, taken]);
    stream.off("data", count);
    // Both answers arrived in one read, and the release ran first on Redis: B got the lock.
    expect(chunks).toBe(1);
    expect(result).toBe("released");
    expect(h).not.toBeNull();
    expect(events.map((e) => `${e.type} ${"owner" in e ? e.owner.split(":")[0] : ""}`)).toEqual([
      "released order-a",
      "acquired order-b",
    ]);
    await h!.release();
  });
});
