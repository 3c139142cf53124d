import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidOptionError, LockLostError, LockTimeoutError } from "../../src/index.js";
import { connect, makeLocks, sleep, uniq } from "../helpers.js";

let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

/** Counts holders in and out; the most that were in at once. */
function gauge() {
  let inside = 0;
  let most = 0;
  return {
    enter() {
      inside++;
      most = Math.max(most, inside);
    },
    leave() {
      inside--;
    },
    get most() {
      return most;
    },
  };
}

describe("semaphore", () => {
  it("admits at most `permits` holders at once among 20 callers of two Locks, and all of them get through", async () => {
    const a = makeLocks(redis, { waitMs: 10_000 });
    const b = makeLocks(redis, { waitMs: 10_000 });
    const name = uniq("sem");
    const g = gauge();
    const tokens: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).locks.semaphore(name, 3).withLock(async (h) => {
          g.enter();
          tokens.push(h.token!);
          await sleep(15);
          g.leave();
        }),
      ),
    );
    expect(g.most).toBe(3);
    expect(new Set(tokens).size).toBe(20);
    expect(await redis.exists(`lock:semaphore:{${name}}`)).toBe(0);
    await Promise.all([a.locks.close(), b.locks.close()]);
  });

  it("a full semaphore refuses tryAcquire and times out acquire; a release lets the next one in", async () => {
    const { locks } = makeLocks(redis);
    const sem = locks.semaphore(uniq("full"), 2);
    const h1 = await sem.acquire();
    const h2 = await sem.acquire();
    expect(await sem.tryAcquire()).toBeNull();
    await expect(sem.acquire({ waitMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    const waiting = sem.acquire({ waitMs: 5_000 });
    await sleep(30);
    expect(await h1.release()).toBe("released");
    const h3 = await waiting;
    expect(h3.isHeld()).toBe(true);
    await Promise.all([h2.release(), h3.release()]);
    await locks.close();
  });

  it("a crashed holder's permit comes back when its lease ends", async () => {
    const crashed = makeLocks(redis, { leaseMs: 300 });
    const live = makeLocks(redis);
    const name = uniq("crash");
    await crashed.locks.semaphore(name, 1).acquire();
    // The crash: the watchdog stops, nothing is released.
    await crashed.locks.close();
    const started = performance.now();
    const h = await live.locks.semaphore(name, 1).acquire({ waitMs: 3_000 });
    expect(performance.now() - started).toBeLessThan(2_000);
    await h.release();
    await live.locks.close();
  });

  it("the watchdog keeps a permit past its lease; a permit taken away is reported lost", async () => {
    const { locks, events } = makeLocks(redis, { leaseMs: 300 });
    const name = uniq("lost");
    const h = await locks.semaphore(name, 2).acquire();
    await sleep(700);
    expect(h.isHeld()).toBe(true);
    const lost = new Promise<unknown>((r) => h.signal.addEventListener("abort", () => r(h.signal.reason)));
    await redis.hdel(`lock:semaphore:{${name}}`, h.owner);
    expect(await lost).toBeInstanceOf(LockLostError);
    expect(events.some((e) => e.type === "lost")).toBe(true);
    expect(await h.release()).toBe("not-owner");
    await locks.close();
  });

  it("re-entry inside withLock re-enters the permit instead of taking a second one", async () => {
    const { locks } = makeLocks(redis);
    const sem = locks.semaphore(uniq("reenter"), 1);
    const inner = await sem.withLock(async (outer) => {
      const h = await sem.acquire({ waitMs: 0 });
      expect(h.owner).toBe(outer.owner);
      expect(h.count).toBe(2);
      expect(h.token).toBe(outer.token);
      return h.release();
    });
    expect(inner).toBe("decremented");
    await locks.close();
  });

  it("a release with a stale token does not free a newer grant to the same owner name", async () => {
    const { locks } = makeLocks(redis);
    const name = uniq("stale");
    const sem = locks.semaphore(name, 1);
    const h = await sem.acquire({ owner: "fixed-owner" });
    await redis.del(`lock:semaphore:{${name}}`);
    const again = await sem.acquire({ owner: "fixed-owner" });
    expect(again.token).not.toBe(h.token);
    expect(await h.release()).toBe("not-owner");
    expect(again.isHeld()).toBe(true);
    expect(await redis.hexists(`lock:semaphore:{${name}}`, "fixed-owner")).toBe(1);
    await again.release();
    await locks.close();
  });

  it("refuses bad permit counts with InvalidOptionError", async () => {
    const { locks } = makeLocks(redis);
    for (const bad of [0, -1, 1.5, Number.NaN, "3", 10_001]) {
      expect(() => locks.semaphore("x", bad as number)).toThrow(InvalidOptionError);
    }
    await locks.close();
  });

  it("its events carry kind: semaphore (a mutex's carry none), so one onEvent tells them apart", async () => {
    const { locks, events } = makeLocks(redis);
    const name = uniq("events");
    await locks.semaphore(name, 2).withLock(() => {});
    await locks.withLock(name, () => {});
    const mine = events.filter((e) => e.resource === name);
    expect(mine.map((e) => [e.type, e.kind])).toEqual([
      ["acquired", "semaphore"],
      ["released", "semaphore"],
      ["acquired", undefined],
      ["released", undefined],
    ]);
    await locks.close();
  });
});
