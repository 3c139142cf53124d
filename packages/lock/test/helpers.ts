import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, inject, vi } from "vitest";
import { startReplyCutter } from "../../../scripts/lib/reply-cutter.mjs";
import { createLocks, type LockEvent, type Locks, type LocksOptions } from "../src/index.js";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
    redisPort: number;
  }
}

let n = 0;
/** A unique resource name per test, so tests never see each other's keys. */
export const uniq = (name: string): string =>
  `${name}.${process.pid}.${++n}.${Math.random().toString(36).slice(2, 8)}`;

export function connect(): Redis {
  return new Redis(inject("redisUrl"), { lazyConnect: false });
}

/**
 * A client through the reply cutter (scripts/lib/reply-cutter.mjs), configured like the API's: an unanswered
 * command is never re-sent after a reconnect; it fails at commandTimeout, and the caller cannot know whether it ran.
 */
export async function connectThrough(url: string): Promise<Redis> {
  const redis = new Redis(url, {
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 800,
  });
  redis.on("error", () => {});
  await redis.ping();
  return redis;
}

/**
 * For a whole test file: two connections to the suite's Redis (as two processes would have), opened before the
 * file's tests and closed after them. Read the fields inside tests.
 */
export function twoConnectionsForFile(): { redis: Redis; other: Redis } {
  const ctx = {} as ReturnType<typeof twoConnectionsForFile>;
  beforeAll(() => {
    ctx.redis = connect();
    ctx.other = connect();
  });
  afterAll(() => {
    ctx.redis?.disconnect();
    ctx.other?.disconnect();
  });
  return ctx;
}

export function makeLocks(redis: Redis, opts: Partial<LocksOptions> = {}) {
  const events: LockEvent[] = [];
  const locks = createLocks({ redis, onEvent: (e) => events.push(e), ...opts });
  return { locks, events };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `p`'s value, or "still waiting" after `ms`: a hang fails the test at once, not at its timeout. */
export function within<T>(p: Promise<T>, ms: number): Promise<T | "still waiting"> {
  return Promise.race([p, sleep(ms).then(() => "still waiting" as const)]);
}

export interface Hold {
  owner: string;
  start: number;
  end: number;
}

/** Throws if two holds of different owners overlap in time. */
export function assertNoOverlap(holds: Hold[]): void {
  const sorted = [...holds].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    if (prev.owner !== cur.owner && cur.start < prev.end) {
      throw new Error(
        `holds overlap: ${prev.owner} [${prev.start.toFixed(2)}, ${prev.end.toFixed(2)}] and ${cur.owner} [${cur.start.toFixed(2)}, ${cur.end.toFixed(2)}]`,
      );
    }
  }
}

/** Reads `INFO commandstats` and returns calls per command name. */
export async function commandStats(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info("commandstats");
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+)/g)) out[m[1]!] = Number(m[2]);
  return out;
}

/** A Locks' release subscriptions (LocksCore.subs): tests close its subscriber, or hand it a message. */
export interface ReleaseSubscriptions {
  sub?: { close(): Promise<void> };
  onRelease(resource: string, message?: string): void;
}

/**
 * Makes a Locks deaf to release messages (its subscriber closed, never back): only its re-checks remain, and
 * whatever the test delivers through the returned subscriptions.
 */
export async function deafen(locks: Locks): Promise<ReleaseSubscriptions> {
  const subs = (locks as unknown as { subs: ReleaseSubscriptions }).subs;
  await expect.poll(() => subs.sub !== undefined).toBe(true);
  await subs.sub!.close();
  return subs;
}

/**
 * For a whole test file: a reply cutter (scripts/lib/reply-cutter.mjs) in front of the suite's Redis and a direct
 * connection beside it, started before the file's tests and stopped after them. Read the fields inside tests.
 */
export function replyCutterForFile(): {
  cutter: Awaited<ReturnType<typeof startReplyCutter>>;
  direct: Redis;
} {
  const ctx = {} as ReturnType<typeof replyCutterForFile>;
  beforeAll(async () => {
    ctx.cutter = await startReplyCutter(inject("redisUrl"));
    ctx.direct = connect();
  });
  afterAll(async () => {
    ctx.direct?.disconnect();
    await ctx.cutter?.close();
  });
  return ctx;
}

/**
 * Resolves once `locks` listens for `resource`'s release messages (its gate subscribed). Returns a look-up of
 * the resource's gate as it is at each call (a gate may be dropped and made again).
 */
export async function untilListening(
  locks: Locks,
  resource: string,
): Promise<() => { subscription?: string; epoch?: number } | undefined> {
  const gates = (locks as unknown as { gates: Map<string, { subscription?: string; epoch?: number }> }).gates;
  await vi.waitFor(() => expect(gates.get(resource)?.subscription).toBe("subscribed"));
  return () => gates.get(resource);
}
