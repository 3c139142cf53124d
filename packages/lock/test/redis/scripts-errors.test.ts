// Issue 12, smaller items: an error inside the acquire script after the grant must not leave a lock that no
// handle knows about (Lua does not roll back writes made before an error); a prefix that makes our lock key
// collide with another key of ours (the fence counter) is refused.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocks, fenceKey, InvalidOptionError, lockKey } from "../../src/index.js";
import { connect, makeLocks, uniq } from "../helpers.js";

let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

describe("the acquire script fails before it writes anything", () => {
  it("a fence counter of the wrong type: acquire rejects and no lock is left behind", async () => {
    const { locks, events } = makeLocks(redis);
    const res = uniq("acct");
    await redis.hset(fenceKey(res), "not", "a counter");
    const outcome = await locks.acquire(res, { waitMs: 200 }).then(
      () => "acquired",
      (e: unknown) => e,
    );
    expect(outcome).toBeInstanceOf(Error);
    expect(String((outcome as Error).message)).toMatch(/WRONGTYPE/);
    expect(await redis.exists(lockKey("lock:", res))).toBe(0);
    expect(events.filter((e) => e.type === "acquired")).toEqual([]);
    // Once the stray key is gone the lock works.
    await redis.del(fenceKey(res));
    const h = await locks.acquire(res);
    expect(await h.release()).toBe("released");
    await locks.close();
  });
});

describe("prefixes that collide with our own keys", () => {
  it.each(["fence:"])("prefix %j is refused", (prefix) => {
    expect(() => createLocks({ redis, prefix })).toThrow(InvalidOptionError);
  });
});
