// The live view's subscriber to one node, through a reply cutter: `cut()` drops its connection alone. After a
// reconnect it must be subscribed again (it does so itself, not ioredis), and a stop() while that PSUBSCRIBE is
// unanswered must leave no unhandled rejection: ioredis's own re-subscribe left one, which ends an API process.
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { startReplyCutter } from "../../../../scripts/lib/reply-cutter.mjs";
import { uid } from "../../test/context.js";
import { NodeWatch } from "./node-watch.js";
import { enableKeyspaceEvents } from "./notifications.js";

let admin: Redis;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(async () => {
  admin = new Redis(inject("redisUrl"));
  await enableKeyspaceEvents(admin);
  process.on("unhandledRejection", onUnhandled);
});
afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
  admin.disconnect();
});

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

type Cutter = Awaited<ReturnType<typeof startReplyCutter>>;

async function watchThroughCutter(
  onReconnect: (cutter: Cutter) => void,
  beforeStart: (cutter: Cutter, prefix: string) => void = () => {},
) {
  const cutter = await startReplyCutter(inject("redisUrl"));
  // Like the API's clients (redis.ts), an unanswered command is not re-sent after a reconnect; unlike them, no
  // commandTimeout gives up on it.
  const node = new Redis(cutter.url, { autoResendUnfulfilledCommands: false });
  node.on("error", () => {});
  const prefix = `${uid("watch")}:`;
  const keys: string[] = [];
  const watch = new NodeWatch(
    node,
    prefix,
    "node-watch-test",
    (key) => keys.push(key),
    () => onReconnect(cutter),
  );
  cleanup.push(
    () => cutter.close(),
    () => node.disconnect(),
    () => watch.stop(),
  );
  beforeStart(cutter, prefix);
  await within(watch.start(), 5_000);
  return { cutter, watch, prefix, keys };
}

/** A lock key written under `prefix` is reported (it may take a moment to be subscribed again). */
async function expectReported(prefix: string, keys: string[]): Promise<void> {
  const key = `${prefix}{r}`;
  await vi.waitFor(
    async () => {
      await admin.hset(key, "owner", "1");
      expect(keys).toContain(key);
    },
    { timeout: 3_000, interval: 50 },
  );
  await admin.del(key);
}

describe("NodeWatch after its connection drops", () => {
  it("is subscribed again and reports key events", async () => {
    let reconnects = 0;
    const { cutter, prefix, keys } = await watchThroughCutter(() => reconnects++);
    cutter.cut();
    await vi.waitFor(() => expect(reconnects).toBe(1), { timeout: 5_000, interval: 10 });
    await expectReported(prefix, keys);
  });

  it("stopped while its re-PSUBSCRIBE is unanswered: no unhandled rejection", async () => {
    let stopped!: () => void;
    const stopping = new Promise<void>((resolve) => {
      stopped = resolve;
    });
    let watch: NodeWatch | undefined;
    const made = await watchThroughCutter((cutter) => {
      cutter.holdReplies();
      watch?.stop();
      stopped();
    });
    watch = made.watch;
    const before = unhandled.length;
    made.cutter.cut();
    await stopping;
    // The connection's close has come and gone: a rejection left unhandled is reported by now.
    await sleep(200);
    expect(unhandled.slice(before)).toEqual([]);
  });

  it("its first PSUBSCRIBE cut off before Redis got it: start() still ends, subscribed", async () => {
    let killed: Promise<boolean> | undefined;
    const { prefix, keys } = await watchThroughCutter(
      () => {},
      (cutter, p) => {
        killed = cutter.cutOnce(p, "before-server");
      },
    );
    expect(await killed).toBe(true);
    await expectReported(prefix, keys);
  });
});

/** `p`, or a failure naming what did not settle within `ms`. */
async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  const late = sleep(ms, undefined, { ref: false }).then(() => {
    throw new Error(`did not settle within ${ms} ms`);
  });
  return Promise.race([p, late]);
}
