// A subscriber connection that drops is subscribed again on reconnect by the library (redis/resubscribe.ts),
// not by ioredis: ioredis's own re-SUBSCRIBE leaves its promise unhandled, so a Locks closed while its
// subscriber reconnected could end the process ("Connection is closed.", CI red at a724a76 under ioredis 5).
// Each subscriber talks through a reply cutter: `cut()` drops its connection alone, and holding replies keeps
// the re-SUBSCRIBE unanswered when close() comes.
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { startReplyCutter } from "../../../../scripts/lib/reply-cutter.mjs";
import type { ReleaseSubscriber } from "../../src/core/backend.js";
import { realClock } from "../../src/core/clock.js";
import { releaseChannel } from "../../src/index.js";
import { createRedisSubscriber } from "../../src/redis/subscriber.js";
import { createRedlockSubscriber } from "../../src/redlock/subscriber.js";
import { connect, connectThrough, sleep, uniq, within } from "../helpers.js";

let admin: Redis;
beforeAll(() => {
  admin = connect();
});
afterAll(() => admin.disconnect());

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on("unhandledRejection", onUnhandled);
});
afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
});

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const subscribers = async (channel: string) =>
  Number(((await admin.pubsub("NUMSUB", channel)) as unknown[])[1]);

type MakeSubscriber = (
  client: Redis,
  onRelease: (r: string) => void,
  onResubscribed: () => void,
) => ReleaseSubscriber;
const kinds: [string, MakeSubscriber][] = [
  [
    "a Locks' subscriber",
    (c, onRelease, again) => createRedisSubscriber(c, false, "lock:", onRelease, again),
  ],
  [
    "a Redlock's subscriber (one node)",
    (c, onRelease, again) => createRedlockSubscriber(realClock, [c], 1, "lock:", onRelease, again),
  ],
];

interface CutterOptions {
  /** false: a client that neither re-sends an unanswered command after a reconnect nor gives up on it. */
  commandTimeout?: false;
  /** Reconnect this long after a drop (ioredis's default starts at 50 ms). */
  reconnectAfterMs?: number;
}

async function throughCutter(options: CutterOptions = {}) {
  const cutter = await startReplyCutter(inject("redisUrl"));
  const client = await connectThrough(cutter.url);
  // The subscriber's connection is a duplicate() of this client, made on its first subscribe: it takes these.
  if (options.commandTimeout === false) client.options.commandTimeout = undefined;
  const after = options.reconnectAfterMs;
  if (after !== undefined) client.options.retryStrategy = () => after;
  cleanup.push(
    () => cutter.close(),
    () => client.disconnect(),
  );
  return { cutter, client };
}

describe.each(kinds)("%s after its connection drops", (_, make) => {
  /** A subscriber of this kind through a cutter, with what it heard and how many times it came back. */
  async function subscriberThroughCutter(options: CutterOptions = {}) {
    const { cutter, client } = await throughCutter(options);
    const heard: string[] = [];
    let reconnects = 0;
    const sub = make(
      client,
      (r) => heard.push(r),
      () => reconnects++,
    );
    cleanup.push(() => sub.close());
    return { cutter, sub, heard, reconnects: () => reconnects };
  }

  it("is on every channel it was on, and on none it left, and hears releases on them", async () => {
    const { cutter, sub, heard, reconnects } = await subscriberThroughCutter();
    const [kept, left] = [uniq("kept"), uniq("left")];
    await sub.subscribe(kept);
    await sub.subscribe(left);
    sub.unsubscribe(left);
    await vi.waitFor(async () => expect(await subscribers(releaseChannel(left))).toBe(0), { interval: 10 });

    cutter.cut();
    await vi.waitFor(() => expect(reconnects()).toBe(1), { timeout: 5_000, interval: 10 });
    await vi.waitFor(async () => expect(await subscribers(releaseChannel(kept))).toBe(1), { interval: 10 });
    expect(await subscribers(releaseChannel(left))).toBe(0);
    await admin.publish(releaseChannel(kept), "x");
    await vi.waitFor(() => expect(heard).toEqual([kept]), { interval: 10 });
  });

  it("closed while its re-SUBSCRIBE is unanswered: no unhandled rejection", async () => {
    const { cutter, client } = await throughCutter();
    let closed!: () => void;
    const closing = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const sub = make(
      client,
      () => {},
      () => {
        // Reconnected, its channels sent again: their answer is held, and close() comes first.
        cutter.holdReplies();
        void sub.close().then(closed);
      },
    );
    cleanup.push(() => sub.close());
    await sub.subscribe(uniq("closing"));
    const before = unhandled.length;
    cutter.cut();
    await closing;
    // The connection's close has come and gone: a rejection left unhandled is reported by now.
    await sleep(200);
    expect(unhandled.slice(before)).toEqual([]);
  });

  it("dropped again before its re-SUBSCRIBE reached Redis: subscribed on the next reconnect, nothing unhandled", async () => {
    const { cutter, sub, heard, reconnects } = await subscriberThroughCutter();
    const ch = uniq("again");
    await sub.subscribe(ch);
    const before = unhandled.length;
    // The first reconnect's re-SUBSCRIBE names the channel: that connection is killed before Redis gets it.
    const killed = cutter.cutOnce(releaseChannel(ch), "before-server");
    cutter.cut();
    expect(await killed).toBe(true);
    await vi.waitFor(() => expect(reconnects()).toBe(2), { timeout: 5_000, interval: 10 });
    await vi.waitFor(async () => expect(await subscribers(releaseChannel(ch))).toBe(1), { interval: 10 });
    await admin.publish(releaseChannel(ch), "x");
    await vi.waitFor(() => expect(heard).toEqual([ch]), { interval: 10 });
    // And once more with nothing in flight: only the re-SUBSCRIBE on this reconnect puts it back.
    cutter.cut();
    await vi.waitFor(() => expect(reconnects()).toBe(3), { timeout: 5_000, interval: 10 });
    await vi.waitFor(async () => expect(await subscribers(releaseChannel(ch))).toBe(1), { interval: 10 });
    await admin.publish(releaseChannel(ch), "y");
    await vi.waitFor(() => expect(heard).toEqual([ch, ch]), { interval: 10 });
    await sleep(200);
    expect(unhandled.slice(before)).toEqual([]);
  });

  it.each([
    ["before Redis got it", "before-server"],
    ["after Redis ran it, its answer lost", "after-server"],
  ] as const)(
    "a SUBSCRIBE cut off %s still settles, on a client that neither re-sends nor times out",
    async (_, when) => {
      const { cutter, sub, heard } = await subscriberThroughCutter({ commandTimeout: false });
      // The connection is up and subscribed to something else, so the SUBSCRIBE goes out at once.
      await sub.subscribe(uniq("first"));
      const ch = uniq("cut-off");
      const killed = cutter.cutOnce(releaseChannel(ch), when);
      const subscribing = sub.subscribe(ch);
      expect(await killed).toBe(true);
      // Settled: the waiters behind it learn whether messages flow (core/subscriptions.ts waits on this).
      expect(await within(subscribing, 5_000)).not.toBe("still waiting");
      await vi.waitFor(async () => expect(await subscribers(releaseChannel(ch))).toBe(1), { interval: 10 });
      await admin.publish(releaseChannel(ch), "x");
      await vi.waitFor(() => expect(heard).toEqual([ch]), { interval: 10 });
    },
  );

  it.each([
    ["before Redis got it", "at once", "before-server"],
    ["before Redis got it", "while it reconnects", "before-server"],
    ["after Redis ran it, its answer lost", "at once", "after-server"],
    ["after Redis ran it, its answer lost", "while it reconnects", "after-server"],
  ] as const)(
    "its SUBSCRIBE cut off %s and the channel left %s: the re-sent SUBSCRIBE does not put it back",
    async (_, left, when) => {
      // Reconnects 300 ms after a drop, so that "while it reconnects" is surely so 50 ms after the cut.
      const { cutter, sub, reconnects } = await subscriberThroughCutter({ reconnectAfterMs: 300 });
      const kept = uniq("kept");
      await sub.subscribe(kept);
      const ch = uniq("left");
      const killed = cutter.cutOnce(releaseChannel(ch), when);
      const subscribing = sub.subscribe(ch).catch(() => {});
      expect(await killed).toBe(true);
      // "at once": the client has not seen the drop yet, and writes the UNSUBSCRIBE to the dead connection.
      if (left === "while it reconnects") await sleep(50);
      sub.unsubscribe(ch);
      await vi.waitFor(() => expect(reconnects()).toBe(1), { timeout: 5_000, interval: 10 });
      expect(await within(subscribing, 5_000)).not.toBe("still waiting");
      await vi.waitFor(async () => expect(await subscribers(releaseChannel(kept))).toBe(1), { interval: 10 });
      // Commands on the connection run in order: once a later SUBSCRIBE is answered, the re-sent one and the
      // UNSUBSCRIBE have run.
      await sub.subscribe(uniq("later"));
      expect(await subscribers(releaseChannel(ch))).toBe(0);
    },
  );

  it("closed while its cut-off SUBSCRIBE waits to be re-sent: it never comes back, nothing unhandled", async () => {
    const { cutter, sub } = await subscriberThroughCutter({ reconnectAfterMs: 300 });
    const ch = uniq("closed");
    await sub.subscribe(uniq("first"));
    const killed = cutter.cutOnce(releaseChannel(ch), "after-server");
    void sub.subscribe(ch).catch(() => {});
    expect(await killed).toBe(true);
    const before = unhandled.length;
    await sleep(50); // reconnecting, the SUBSCRIBE queued to be re-sent
    await sub.close();
    // Past the reconnect it would have made: a connection that outlived close() would subscribe ch again.
    await sleep(600);
    expect(await subscribers(releaseChannel(ch))).toBe(0);
    expect(unhandled.slice(before)).toEqual([]);
  });
});
