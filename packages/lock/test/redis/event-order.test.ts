// "released" before the next owner's "acquired", when both replies come back in one socket read. The two
// commands are made to leave in one write (the socket corked by hand until both are queued), so Redis runs
// the release first and answers both at once; the events must keep Redis's order whatever path each
// reply's promise takes (the batched acquire, or the attempt with `reads`), and however many promise hops
// lie between a reply and its caller: the backend delivers answers in send order (src/redis/in-order.ts)
// and the release's event is emitted at its delivery.
import type { Writable } from "node:stream";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLocks, type LockEvent, type Locks, type ReadsFn } from "../../src/index.js";
import { inOrderOn } from "../../src/redis/in-order.js";
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

/** Makes the release script's answer reach its caller `hops` promise turns late. */
function slowReleaseAnswers(hops: number): () => void {
  const r = redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = r.lockyardRelease!;
  r.lockyardRelease = (...args: unknown[]) => {
    let p = original.apply(redis, args);
    for (let i = 0; i < hops; i++) p = p.then((v) => v);
    return p;
  };
  return () => {
    r.lockyardRelease = original;
  };
}

describe("answers are delivered in the order their commands were sent", () => {
  it("whatever order the promises settle in", async () => {
    const order = inOrderOn({});
    const seen: string[] = [];
    const settle: Record<string, (v: string) => void> = {};
    for (const name of ["first", "second", "third"]) {
      const sent = new Promise<string>((resolve) => {
        settle[name] = resolve;
      });
      order.track(sent, { resolve: (v) => seen.push(v), reject: () => seen.push(`${name} failed`) });
    }
    settle.third!("third");
    settle.second!("second");
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([]);
    settle.first!("first");
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(["first", "second", "third"]);
  });

  it("a failed command is delivered in its place too", async () => {
    const order = inOrderOn({});
    const seen: string[] = [];
    order.track(new Promise((_, reject) => setTimeout(() => reject(new Error("x")), 5)), {
      resolve: () => seen.push("first"),
      reject: () => seen.push("first failed"),
    });
    order.track(Promise.resolve("second"), { resolve: (v) => seen.push(v), reject: () => {} });
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).toEqual(["first failed", "second"]);
  });
});

describe("event order across one Redis reply", () => {
  it.each([
    ["batched acquire", undefined, 0],
    ["acquire with reads", ((c) => c.get("order:unrelated")) satisfies ReadsFn, 0],
    // The release's answer takes 50 more promise turns than the grant's: only an explicit order keeps it first.
    ["batched acquire, slow release answer", undefined, 50],
    ["acquire with reads, slow release answer", ((c) => c.get("order:unrelated")) satisfies ReadsFn, 50],
  ] as const)("%s: the release's event comes first", async (_, reads, hops) => {
    const restore = slowReleaseAnswers(hops);
    try {
      await releaseThenAcquireInOneRead(reads);
    } finally {
      restore();
    }
  });
});

async function releaseThenAcquireInOneRead(reads: ReadsFn | undefined): Promise<void> {
  {
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
  }
}
