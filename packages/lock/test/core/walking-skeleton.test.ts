import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocks, fenceKey, type Locks, releaseChannel } from "../../src/index.js";
import type { ScriptCommands } from "../../src/redis/scripts/index.js";
import { queueKeyOf, queueLeasesKeyOf } from "../../src/resource.js";
import { assertNoOverlap, connect, type Hold, sleep, uniq } from "../helpers.js";

let redis: Redis;
let locks: Locks;
beforeAll(() => {
  redis = connect();
  locks = createLocks({ redis });
});
afterAll(async () => {
  await locks.close();
  redis.disconnect();
});

describe("walking skeleton", () => {
  it("200 concurrent tasks on one key never hold it at the same time", async () => {
    const resource = uniq("skeleton");
    const holds: Hold[] = [];
    await Promise.all(
      Array.from({ length: 200 }, () =>
        locks.withLock(
          resource,
          async (h) => {
            const start = performance.now();
            await redis.get("noop");
            holds.push({ owner: h.owner, start, end: performance.now() });
          },
          { waitMs: 20_000 },
        ),
      ),
    );
    expect(holds).toHaveLength(200);
    expect(new Set(holds.map((h) => h.owner)).size).toBe(200);
    assertNoOverlap(holds);
    expect(await redis.exists(`lock:{${resource}}`)).toBe(0);
  });

  it("a release by a non-owner deletes nothing", async () => {
    const resource = uniq("nonowner");
    const h = await locks.acquire(resource);
    const other = createLocks({ redis, instanceId: "intruder" });
    expect(await other.tryAcquire(resource)).toBeNull();
    // Another owner's handle of the same key (as after a lease expired and someone else took it).
    const stale = await other.acquire(resource, { owner: "intruder:stale", waitMs: 0 }).catch(() => null);
    expect(stale).toBeNull();
    const released = await (redis as unknown as ScriptCommands).lockyardRelease(
      h.key,
      releaseChannel(resource),
      fenceKey(resource),
      queueKeyOf(h.key),
      queueLeasesKeyOf(h.key),
      "intruder:stale",
      1000,
      "0",
      "",
      1500,
      "",
      0,
      0,
    );
    expect(released).toEqual([0, 0]);
    expect(await redis.hget(h.key, h.owner)).toBe("1");
    expect(await redis.pttl(h.key)).toBeGreaterThan(0);
    expect(await h.release()).toBe("released");
    await other.close();
  });

  it("the lock disappears by itself after its lease", async () => {
    const resource = uniq("lease");
    const h = await locks.acquire(resource, { leaseMs: 300 });
    expect(await redis.pttl(h.key)).toBeGreaterThan(0);
    await sleep(450);
    expect(await redis.exists(h.key)).toBe(0);
    expect(h.isHeld()).toBe(false);
    const next = await locks.tryAcquire(resource, { leaseMs: 300 });
    expect(next).not.toBeNull();
    expect(await h.release()).toBe("not-owner");
    expect(await next!.release()).toBe("released");
  });
});
