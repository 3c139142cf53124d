import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { scripts } from "../../src/backend.js";
import { createLocks, fencedWrite, type LockHandle, type Locks } from "../../src/index.js";
import { createRedisBackend, RENEW_CAP } from "../../src/redis/backend.js";
import { BATCH_CAP } from "../../src/redis/tick-batch.js";
import { commandStats, connect, uniq } from "../helpers.js";

let redis: Redis;
let admin: Redis;
let locks: Locks;
beforeAll(() => {
  redis = connect();
  admin = connect();
  locks = createLocks({ redis });
});
afterAll(async () => {
  await locks.close();
  redis.disconnect();
  admin.disconnect();
});

/** Script calls Redis ran while `fn` ran, from INFO commandstats (admin's own INFO is not a script). */
async function scriptCalls<T>(fn: () => Promise<T>): Promise<{ value: T; calls: number }> {
  const count = (s: Record<string, number>) => (s.evalsha ?? 0) + (s.eval ?? 0);
  const before = count(await commandStats(admin));
  const value = await fn();
  return { value, calls: count(await commandStats(admin)) - before };
}

describe("per-tick batching of acquire and release", () => {
  it(`64 acquires on distinct keys in one tick are ${64 / BATCH_CAP} script calls; so are their 64 releases`, async () => {
    const resources = Array.from({ length: 64 }, () => uniq("batch64"));
    const acq = await scriptCalls(() => Promise.all(resources.map((r) => locks.acquire(r))));
    expect(acq.calls).toBe(Math.ceil(64 / BATCH_CAP));
    const handles = acq.value;
    for (const [i, h] of handles.entries()) {
      expect(h.count).toBe(1);
      expect(h.token).toBeGreaterThan(0);
      expect(await redis.hget(`lock:{${resources[i]}}`, h.owner)).toBe("1");
    }
    const rel = await scriptCalls(() => Promise.all(handles.map((h) => h.release())));
    expect(rel.calls).toBe(Math.ceil(64 / BATCH_CAP));
    expect(rel.value).toEqual(Array(64).fill("released"));
    expect(await redis.exists(...resources.map((r) => `lock:{${r}}`))).toBe(0);
  });

  it(`splits a tick's calls at ${BATCH_CAP} locks per script call`, async () => {
    const n = 2 * BATCH_CAP + 20;
    const resources = Array.from({ length: n }, () => uniq("batchcap"));
    const acq = await scriptCalls(() => Promise.all(resources.map((r) => locks.acquire(r))));
    expect(acq.calls).toBe(3);
    expect(new Set(acq.value.map((h) => h.key)).size).toBe(n);
    const rel = await scriptCalls(() => Promise.all(acq.value.map((h) => h.release())));
    expect(rel.calls).toBe(3);
  });

  it("re-entries and contended keys inside one batch answer as one call each would, in call order", async () => {
    const [a, b] = [uniq("mix.a"), uniq("mix.b")];
    const owner = "mixer:0123456789abcdef0123456789abcdef";
    const other = createLocks({ redis, instanceId: "other" });
    try {
      // One tick: fresh a, re-entry of a by the same owner, another owner on a (refused), fresh b.
      const { value, calls } = await scriptCalls(() =>
        Promise.all([
          locks.tryAcquire(a, { owner }),
          locks.tryAcquire(a, { owner }),
          other.tryAcquire(a),
          locks.tryAcquire(b, { owner }),
        ]),
      );
      // `other` has its own batcher: one call for its attempt, one for the three of `locks`.
      expect(calls).toBe(2);
      const [a1, a2, refused, b1] = value;
      expect(a1!.count).toBe(1);
      expect(a2!.count).toBe(2);
      expect(a2!.token).toBe(a1!.token);
      expect(refused).toBeNull();
      expect(b1!.count).toBe(1);
      // The refused attempt marked waiters, so the full release publishes; the decrement does not.
      expect(await redis.hgetall(`lock:{${a}}`)).toEqual({ [owner]: "2", "~waiters": "1" });
      const sub = new Redis(inject("redisUrl"));
      const messages: string[] = [];
      sub.on("message", (ch: string) => messages.push(ch));
      await sub.subscribe(`lock-released:{${a}}`, `lock-released:{${b}}`);
      const results = await Promise.all([a2!.release(), a1!.release(), b1!.release()]);
      expect(results).toEqual(["decremented", "released", "released"]);
      await sub.ping();
      expect(messages).toEqual([`lock-released:{${a}}`]);
      sub.disconnect();
    } finally {
      await other.close();
    }
  });

  it("a re-entry never shortens the TTL, in a batch as alone", async () => {
    const r = uniq("mix.ttl");
    const owner = "ttl:0123456789abcdef0123456789abcdef";
    const long = await locks.acquire(r, { owner, leaseMs: 60_000 });
    const [short, fresh] = await Promise.all([
      locks.acquire(r, { owner, leaseMs: 500 }),
      locks.acquire(uniq("mix.ttl2"), { leaseMs: 500 }),
    ]);
    expect(short.count).toBe(2);
    expect(await redis.pttl(`lock:{${r}}`)).toBeGreaterThan(50_000);
    await Promise.all([short.release(), fresh.release()]);
    expect(await redis.pttl(`lock:{${r}}`)).toBeGreaterThan(50_000);
    await long.release();
  });

  it("an error in one lock's commands fails only its caller; the rest of the batch goes on", async () => {
    const bad = uniq("batch.bad");
    await admin.set(`lock:{${bad}}`, "not a hash");
    const good = [uniq("batch.good"), uniq("batch.good")];
    const { value: settled, calls } = await scriptCalls(() =>
      Promise.allSettled([locks.acquire(good[0]!), locks.acquire(bad), locks.acquire(good[1]!)]),
    );
    expect(calls).toBe(1);
    expect(settled[0]!.status).toBe("fulfilled");
    expect(settled[2]!.status).toBe("fulfilled");
    expect(settled[1]!.status).toBe("rejected");
    expect(String((settled[1] as PromiseRejectedResult).reason)).toMatch(/WRONGTYPE/);
    const hs = [settled[0], settled[2]].map((s) => (s as PromiseFulfilledResult<LockHandle>).value);
    expect(await Promise.all(hs.map((h) => h.release()))).toEqual(["released", "released"]);
    await admin.del(`lock:{${bad}}`);
  });

  it("a failed batch call rejects every caller in it with that call's error", async () => {
    const conn = new Redis(inject("redisUrl"), { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    conn.on("error", () => {});
    await new Promise((r) => conn.once("ready", r));
    const mine = createLocks({ redis: conn, instanceId: "doomed" });
    try {
      const id = await conn.client("ID");
      // Redis stalls, so the batch's one call is in flight when the connection is killed under it.
      await admin.call("CLIENT", "PAUSE", "300", "ALL");
      const pending = Promise.allSettled(Array.from({ length: 10 }, () => mine.acquire(uniq("doomed"))));
      await new Promise((r) => setTimeout(r, 50));
      await admin.call("CLIENT", "KILL", "ID", String(id));
      const settled = await pending;
      const reasons = settled.map((s) => (s.status === "rejected" ? s.reason : null));
      expect(reasons.every((e) => e instanceof Error)).toBe(true);
      // One call, one error object: the same rejection reached every caller.
      expect(new Set(reasons).size).toBe(1);
    } finally {
      await admin.call("CLIENT", "UNPAUSE");
      await mine.close();
      conn.disconnect();
    }
  });

  it("a lone call uses the single-lock script (batch of one)", async () => {
    const own = connect();
    const sent: string[] = [];
    const send = own.sendCommand.bind(own);
    own.sendCommand = ((cmd: { name: string; args: unknown[] }, ...rest: unknown[]) => {
      sent.push(`${cmd.name} ${String(cmd.args[0]).slice(0, 40)}`);
      return (send as (...a: unknown[]) => unknown)(cmd, ...rest);
    }) as typeof own.sendCommand;
    const mine = createLocks({ redis: own });
    await (await mine.acquire(uniq("warm"))).release();
    sent.length = 0;
    const h = await mine.acquire(uniq("lone"));
    await h.release();
    const sha = (name: string) => scripts.find((x) => x.name === name)!.lua;
    const shaOf = (lua: string) => createHash("sha1").update(lua).digest("hex").slice(0, 40);
    expect(sent).toEqual([
      `evalsha ${shaOf(sha("lockyardAcquire"))}`,
      `evalsha ${shaOf(sha("lockyardRelease"))}`,
    ]);
    await mine.close();
    own.disconnect();
  });
});

describe("renewMany", () => {
  it(`splits at ${RENEW_CAP} locks per call, sends one tick's calls together, and answers each in order`, async () => {
    const backend = createRedisBackend(redis, "lock:", 1500, "batching-test");
    const n = 2 * RENEW_CAP + 100;
    const resources = Array.from({ length: n }, () => uniq("renew"));
    const handles = await Promise.all(resources.map((r) => locks.acquire(r, { leaseMs: 5_000 })));
    // Every third lock changes hands behind the holder's back: its renewal must answer false.
    const stolen = new Set(resources.filter((_, i) => i % 3 === 0).map((r) => `lock:{${r}}`));
    await Promise.all([...stolen].map((k) => admin.del(k)));
    const items = handles.map((h) => ({ key: h.key, owner: h.owner, leaseMs: 30_000 }));
    const { value, calls } = await scriptCalls(() => backend.renewMany(items));
    expect(calls).toBe(Math.ceil(n / RENEW_CAP));
    expect(value).toEqual(items.map((it) => !stolen.has(it.key)));
    expect(await redis.pttl(handles[1]!.key)).toBeGreaterThan(20_000);
    await Promise.all(handles.map((h) => h.release()));
  });
});

describe("reads and releaseAfter", () => {
  it("reads run after the grant in the attempt's round trip; a fenced write and the release share the next", async () => {
    const r = uniq("rw");
    const stock = `stock:{${r}}`;
    await admin.hset(stock, "qty", 10);
    const { value: h, calls } = await scriptCalls(() =>
      locks.acquire(r, { reads: (c) => c.hget(stock, "qty") }),
    );
    expect(calls).toBe(1);
    expect(await h.reads).toBe("10");
    const out = await h.releaseAfter((c) => fencedWrite(c, stock, h.token!, -1));
    expect(out.result).toBe("released");
    expect(out.write).toEqual({ status: "fulfilled", value: { ok: true, qty: 9 } });
    expect(await redis.exists(h.key)).toBe(0);
  });

  it("a stale token writes nothing and the lock is released all the same", async () => {
    const r = uniq("rw.stale");
    const stock = `stock:{${r}}`;
    await admin.hset(stock, "qty", 10, "fence", 9_000_000_000_000_000);
    const h = await locks.acquire(r);
    const out = await h.releaseAfter((c) => fencedWrite(c, stock, h.token!, -1));
    expect(out.write).toEqual({
      status: "fulfilled",
      value: { ok: false, reason: "STALE", fence: 9_000_000_000_000_000 },
    });
    expect(out.result).toBe("released");
    expect(await admin.hget(stock, "qty")).toBe("10");
  });

  it("a failed write never hides the release", async () => {
    const r = uniq("rw.fail");
    const h = await locks.acquire(r);
    const out = await h.releaseAfter((c) => c.incr(`lock:{${r}}`));
    expect(out.write.status).toBe("rejected");
    expect(String((out.write as PromiseRejectedResult).reason)).toMatch(/WRONGTYPE/);
    expect(out.result).toBe("released");
    expect(await redis.exists(h.key)).toBe(0);
  });

  it("a refused attempt's reads are dropped; the winning attempt's reads see the previous holder's write", async () => {
    const r = uniq("rw.wait");
    const stock = `stock:{${r}}`;
    await admin.hset(stock, "qty", 5);
    const first = await locks.acquire(r);
    const waiting = locks.acquire(r, { reads: (c) => c.hget(stock, "qty"), waitMs: 5_000 });
    await new Promise((res) => setTimeout(res, 30));
    await first.releaseAfter((c) => fencedWrite(c, stock, first.token!, -2));
    const second = await waiting;
    expect(await second.reads).toBe("3");
    await second.release();
  });
});
