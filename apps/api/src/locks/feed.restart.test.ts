// The live view after a Redis restart, on a redis-server of its own: the restarted server has notifications off
// again, and the subscriber connection may be back before the connection that turns them on (which, without an
// offline queue, fails its CONFIG at once). They must be turned on again all the same, and new locks reported.
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { startRedis } from "../../../../scripts/lib/redis.mjs";
import { testContext, uid } from "../../test/context.js";
import { testFeed } from "../../test/feed.js";
import { LockEvents } from "../../test/lock-events.js";
import { waitUntilReady } from "../redis.js";
import { createCaller } from "../root.js";
import type { LockView } from "../types.js";
import type { LockFeed, LockFeedOptions } from "./feed.js";

let server: {
  url: string;
  kill(signal?: string): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
};
let admin: Redis;
let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  server = await startRedis();
  admin = new Redis(server.url, { maxRetriesPerRequest: null });
  admin.on("error", () => {});
  t = await testContext({ redisUrl: server.url });
});
afterAll(async () => {
  await t?.close();
  admin?.disconnect();
  await server?.stop();
});

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function open(feed: LockFeed, prefix: string): Promise<LockEvents> {
  const abort = new AbortController();
  const caller = createCaller({ ...t.ctx, lockFeed: feed }, { signal: abort.signal });
  const events = new LockEvents(await caller.locks.watch({ prefix }), abort);
  cleanup.push(() => events.close());
  expect((await events.next()).kind).toBe("snapshot");
  return events;
}

/** A feed of this file's own, closed after the test. */
function ownFeed(opts: Partial<LockFeedOptions>): LockFeed {
  const feed = testFeed(t, opts);
  cleanup.push(() => feed.close());
  return feed;
}

const notifyFlags = async () => ((await admin.config("GET", "notify-keyspace-events")) as string[])[1] ?? "";

/** The lock on `resource` is shown within `ms`: heartbeats keep the stream busy, so bound the whole wait. */
async function shownWithin(events: LockEvents, resource: string, ms: number): Promise<LockView | undefined> {
  const key = `lock:{${resource}}`;
  const late = sleep(ms, undefined, { ref: false }).then(() => {
    throw new Error(`the lock was not shown within ${ms} ms`);
  });
  await Promise.race([events.delta(key), late]);
  return events.locks.get(`redis:${key}`);
}

describe("the lock observer after a Redis restart", () => {
  it("turns notifications on again once its main connection is back, and reports new locks", async () => {
    const resource = `test:${uid()}`;
    const events = await open(t.ctx.lockFeed, resource);
    // The main connection is down for the whole restart: the subscriber comes back first, for sure.
    t.redis.disconnect();
    await server.kill("SIGKILL");
    await server.restart();
    await vi.waitFor(async () => expect(await admin.pubsub("NUMPAT")).toBe(1), {
      timeout: 10_000,
      interval: 50,
    });
    expect(await notifyFlags()).toBe("");
    await t.redis.connect();
    expect(await waitUntilReady(t.redis, 5_000)).toBe(true);

    await vi.waitFor(async () => expect(await notifyFlags()).toMatch(/K/), { timeout: 10_000, interval: 50 });
    // The resync after it has run; the 60 s periodic one is far off: only a notification can show this lock.
    await sleep(300);
    const h = await t.locks.acquire(resource, { leaseMs: 5_000 });
    cleanup.push(() => h.release());
    expect((await shownWithin(events, resource, 3_000))?.owners[0]?.count).toBe(1);
  });

  it("turns notifications on again at its periodic resync when they went off unnoticed", async () => {
    const feed = ownFeed({ resyncMs: 300, notificationsCheckMs: 60_000 });
    await open(feed, `test:${uid()}`);
    await admin.config("SET", "notify-keyspace-events", "");
    await vi.waitFor(async () => expect(await notifyFlags()).toMatch(/K/), { timeout: 3_000, interval: 50 });
  });

  // Found by probing the live view: with notifications turned off by an operator the view stood still, the
  // header still live, until the 60 s resync.
  it("an operator turns notifications off: they are on again at the next check, and a lock taken meanwhile is shown", async () => {
    const feed = ownFeed({ notificationsCheckMs: 300 });
    const resource = `test:${uid()}`;
    const events = await open(feed, resource);
    await admin.config("SET", "notify-keyspace-events", "");
    // Taken while nothing is published: only the check's resync can show it (the periodic one is 60 s away).
    const h = await t.locks.acquire(resource, { leaseMs: 10_000 });
    cleanup.push(() => h.release());
    expect((await shownWithin(events, resource, 5_000))?.owners[0]?.count).toBe(1);
    expect(await notifyFlags()).toMatch(/K/);
  });

  // Found by a black-box probe: FLUSHALL publishes no keyspace event, and the deleted locks stayed in the view
  // until their TTL or the 60 s resync.
  it("FLUSHALL: the locks it deleted leave the view at the next check", async () => {
    const feed = ownFeed({ notificationsCheckMs: 300 });
    const resource = `test:${uid()}`;
    const events = await open(feed, resource);
    const h = await t.locks.acquire(resource, { leaseMs: 60_000 });
    cleanup.push(() => h.release().catch(() => undefined));
    expect(await shownWithin(events, resource, 3_000)).toBeDefined();
    await admin.flushall();
    // Its 60 s lease and the 60 s resync are far off: only the check can take it out.
    const key = `lock:{${resource}}`;
    expect((await events.delta(key)).removed).toContain(key);
  });
});
