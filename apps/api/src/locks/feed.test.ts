import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext, uid } from "../../test/context.js";
import { testFeed } from "../../test/feed.js";
import { LockEvents } from "../../test/lock-events.js";
import { redisOptions, waitUntilReady } from "../redis.js";
import { createCaller } from "../root.js";
import type { LockFeed, LockFeedOptions } from "./feed.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext();
});
afterAll(() => t.close());

function feed(opts: Partial<LockFeedOptions> = {}) {
  return testFeed(t, opts);
}

async function open(f: LockFeed, prefix: string): Promise<LockEvents> {
  const abort = new AbortController();
  const caller = createCaller({ ...t.ctx, lockFeed: f }, { signal: abort.signal });
  const events = new LockEvents(await caller.locks.watch({ prefix }), abort);
  expect((await events.next()).kind).toBe("snapshot");
  return events;
}

/** Polls `check` until it holds: waits for something asynchronous to settle, never a speed assertion. */
async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never happened: ${what}`);
}

async function commandCalls(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await t.redis.info("commandstats")).split("\n")) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (m && !/^(info|client)/.test(m[1]!)) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

function growth(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [cmd, n] of after) if (n - (before.get(cmd) ?? 0) > 0) out[cmd] = n - (before.get(cmd) ?? 0);
  return out;
}

const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

const liveViewConnections = async (instanceId: string) =>
  ((await t.redis.client("LIST")) as string)
    .split("\n")
    .filter((l) => l.includes(`name=${instanceId}:live-view`)).length;

describe("the lock observer", () => {
  it("costs Redis the same for 50 streams as for 1 (INFO commandstats)", async () => {
    /** Opens `n` streams, takes, re-enters and releases one lock, waits until every stream saw it all, closes. */
    async function run(n: number): Promise<Record<string, number>> {
      const f = feed();
      const resource = `test:${uid()}`;
      const key = `lock:{${resource}}`;
      const before = await commandCalls();
      const streams = await Promise.all(Array.from({ length: n }, () => open(f, resource)));
      expect(f.status).toMatchObject({
        state: "running",
        mode: "notifications",
        subscribers: n,
        connections: 1,
      });
      const h = await t.locks.acquire(resource, { leaseMs: 5_000 });
      await Promise.all(
        streams.map((s) => s.until(() => s.locks.get(`redis:${key}`)?.owners[0]?.count === 1)),
      );
      const inner = await t.locks.acquire(resource, { owner: h.owner, leaseMs: 5_000 });
      await Promise.all(
        streams.map((s) => s.until(() => s.locks.get(`redis:${key}`)?.owners[0]?.count === 2)),
      );
      await inner.release();
      await h.release();
      await Promise.all(streams.map((s) => s.until(() => !s.locks.has(`redis:${key}`))));
      await Promise.all(streams.map((s) => s.close()));
      await eventually(() => f.status.state === "stopped", "the observer stopped");
      return growth(before, await commandCalls());
    }
    const one = await run(1);
    const fifty = await run(50);
    console.log(
      `commandstats growth, 1 stream: ${JSON.stringify(one)}; 50 streams: ${JSON.stringify(fifty)}`,
    );
    // The workload (acquire, re-enter, two releases) is the same; only how the events batch into reads may vary.
    expect(Math.abs(total(fifty) - total(one))).toBeLessThanOrEqual(Math.max(6, total(one) * 0.1));
    expect(fifty.scan ?? 0).toBe(one.scan ?? 0);
    expect(fifty.psubscribe).toBe(1);
  });

  it.each([
    ["CONFIG", ["-config"], 1],
    ["CONFIG and PSUBSCRIBE", ["-config", "-psubscribe"], 0],
  ])("falls back to periodic resyncs, and says so, when %s is refused", async (_, denied, connections) => {
    await t.redis.config("SET", "notify-keyspace-events", "");
    const user = uid("acl");
    await t.redis.acl("SETUSER", user, "on", ">pw", "~*", "&*", "+@all", ...denied);
    const limited = new Redis({
      ...redisOptions,
      port: t.redis.options.port!,
      username: user,
      password: "pw",
    });
    const warnings: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void warnings.push(line) });
    const f = feed({ redis: limited, logger, fallbackResyncMs: 300 });
    const resource = `test:${uid()}`;
    try {
      expect(await waitUntilReady(limited, 5_000)).toBe(true);
      const events = await open(f, resource);
      expect(f.status).toMatchObject({ state: "running", mode: "resync", connections });
      expect(warnings.join("")).toMatch(/falling back to a full resync of the lock keys every 300 ms/);
      // Nothing turned notifications on, yet the lock shows up and goes away: the resync found it.
      const h = await t.locks.acquire(resource, { leaseMs: 5_000 });
      await events.delta(`lock:{${resource}}`);
      await h.release();
      await events.until(() => events.locks.size === 0);
      expect(await t.redis.config("GET", "notify-keyspace-events")).toEqual(["notify-keyspace-events", ""]);
      await events.close();
      expect(f.status).toMatchObject({ state: "stopped", connections: 0, timers: 0 });
    } finally {
      f.close();
      limited.disconnect();
      await t.redis.acl("DELUSER", user);
    }
  });

  it("shows a lock that was taken and released before the observer could read it, once", async () => {
    // The observer's own connection, so its reads can be held back while the locks' connection runs.
    const conn = t.redis.duplicate();
    const f = feed({ redis: conn });
    const resource = `test:${uid()}`;
    const fleeting = `lock:{${resource}:fleeting}`;
    const marker = `lock:{${resource}:marker}`;
    try {
      expect(await waitUntilReady(conn, 5_000)).toBe(true);
      const events = await open(f, resource);
      // A loaded API reads late: every read the observer sends now runs after the BLPOP, i.e. after the release.
      const late = conn.blpop(uid("never-pushed"), 0.5);
      const h = await t.locks.acquire(`${resource}:fleeting`, { leaseMs: 5_000 });
      await new Promise((r) => setTimeout(r, 50));
      await h.release();
      await late;
      // Deltas come in order: once the marker shows, whatever the late read made of the other lock was sent.
      const m = await t.locks.acquire(`${resource}:marker`, { leaseMs: 5_000 });
      await events.until(() => events.locks.has(`redis:${marker}`));
      await m.release();

      const seen = events.events.flatMap((e) =>
        e.kind !== "delta"
          ? []
          : [
              ...e.removed.filter((k) => k === fleeting).map(() => "removed"),
              ...e.added.filter((l) => l.key === fleeting).map(() => "added"),
            ],
      );
      expect(seen).toEqual(["added", "removed"]);
      expect(events.locks.has(`redis:${fleeting}`)).toBe(false);
      await events.close();
    } finally {
      f.close();
      conn.disconnect();
    }
  });

  it("stops, leaving no timer or connection, when the last subscriber leaves and when the server closes", async () => {
    const instanceId = uid("stop");
    const f = feed({ instanceId, lingerMs: 200 });
    const a = await open(f, "test:");
    const b = await open(f, "test:");
    expect(f.status).toMatchObject({ state: "running", subscribers: 2, connections: 1 });
    expect(f.status.timers).toBeGreaterThan(0);
    expect(await liveViewConnections(instanceId)).toBe(1);
    await a.close();
    expect(f.status).toMatchObject({ state: "running", subscribers: 1 });
    await b.close();
    // It lingers briefly for a reloading page, then stops.
    await eventually(() => f.status.state === "stopped", "the observer stopped after its linger");
    expect(f.status).toMatchObject({ subscribers: 0, connections: 0, timers: 0 });
    await eventually(async () => (await liveViewConnections(instanceId)) === 0, "its connection closed");

    // Back on demand, then the server closes: the open stream ends and nothing is left.
    const c = await open(f, "test:");
    expect(f.status.state).toBe("running");
    f.close();
    await expect(c.next()).rejects.toThrow(/ended/);
    expect(f.status).toMatchObject({ state: "stopped", connections: 0, timers: 0 });
    await eventually(async () => (await liveViewConnections(instanceId)) === 0, "its connection closed");
  });
});
