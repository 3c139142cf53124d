import { pino } from "pino";
import { LockFeed, type LockFeedOptions } from "../src/locks/feed.js";
import { lockSources } from "../src/locks/snapshot.js";
import { type testContext, uid } from "./context.js";

/** A lock observer of a test's own on its context's Redis: silent, stopped as soon as its last stream ends. */
export function testFeed(
  t: Awaited<ReturnType<typeof testContext>>,
  opts: Partial<LockFeedOptions> = {},
): LockFeed {
  return new LockFeed({
    redis: t.redis,
    sources: () => lockSources(t.ctx),
    instanceId: uid("feed"),
    logger: pino({ level: "silent" }),
    lingerMs: 0,
    ...opts,
  });
}
