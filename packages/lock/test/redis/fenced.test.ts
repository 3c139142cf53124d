// Issue 12, defect 5: a stale holder's fenced write must not oversell. The interleaving: A (older token) reads
// qty=1, A's lease runs out, B (newer token) reads qty=1, A's write lands, then B's. The guarded write never
// takes stock below zero (INSUFFICIENT), and a read made under the lock with fencedRead registers the reader's
// token, so A's later write is STALE.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FencedReadResult, fencedRead, fencedWrite } from "../../src/index.js";
import { connect, makeLocks, sleep, uniq } from "../helpers.js";

let redis: Redis;
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  redis.disconnect();
});

describe("fencedWrite has a floor at zero", () => {
  it("a stale holder's write and the new holder's write cannot both take the last unit", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("stock");
    const stock = `stock:{${res}}`;
    await redis.hset(stock, "qty", 1);
    const a = await locks.acquire(res, { leaseMs: 100 });
    const aSees = Number(await redis.hget(stock, "qty"));
    await sleep(200); // A pauses past its lease
    const b = await locks.acquire(res);
    expect(b.token!).toBeGreaterThan(a.token!);
    const bSees = Number(await redis.hget(stock, "qty"));
    expect([aSees, bSees]).toEqual([1, 1]);
    const wa = await fencedWrite(redis, stock, a.token!, -1);
    const wb = await fencedWrite(redis, stock, b.token!, -1);
    const sold = [wa, wb].filter((w) => w.ok).length;
    expect(sold).toBe(1);
    expect(Number(await redis.hget(stock, "qty"))).toBe(0);
    expect(wb).toEqual({ ok: false, reason: "INSUFFICIENT", qty: 0 });
    await b.release();
    await locks.close();
  });

  it("a refused write changes nothing, and a delta that keeps the value at or above zero is applied", async () => {
    const stock = `stock:{${uniq("stock")}}`;
    await redis.hset(stock, "qty", 2, "fence", 7);
    expect(await fencedWrite(redis, stock, 7, -3)).toEqual({ ok: false, reason: "INSUFFICIENT", qty: 2 });
    expect(await redis.hgetall(stock)).toEqual({ qty: "2", fence: "7" });
    expect(await fencedWrite(redis, stock, 8, -2)).toEqual({ ok: true, qty: 0 });
    expect(await redis.hgetall(stock)).toEqual({ qty: "0", fence: "8" });
  });
});

describe("fencedRead registers the reader's token", () => {
  it("after the new holder's read, the stale holder's write is STALE and the new holder sells the unit", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("stock");
    const stock = `stock:{${res}}`;
    await redis.hset(stock, "qty", 1);
    const reads = fencedRead(stock, ["qty"]);
    const a = await locks.acquire(res, { leaseMs: 100, reads });
    expect(await a.reads).toEqual({ state: "held", values: ["1"] });
    await sleep(200); // A pauses past its lease
    const b = await locks.acquire(res, { reads });
    expect((await b.reads) as FencedReadResult).toEqual({ state: "held", values: ["1"] });
    // A's write arrives after B's read: refused, even though B has not written yet.
    expect(await fencedWrite(redis, stock, a.token!, -1)).toMatchObject({ ok: false, reason: "STALE" });
    expect(await fencedWrite(redis, stock, b.token!, -1)).toEqual({ ok: true, qty: 0 });
    expect(Number(await redis.hget(stock, "qty"))).toBe(0);
    await b.release();
    await locks.close();
  });

  it("a refused attempt's read registers nothing", async () => {
    const { locks } = makeLocks(redis);
    const { locks: other } = makeLocks(redis);
    const res = uniq("stock");
    const stock = `stock:{${res}}`;
    await redis.hset(stock, "qty", 1);
    const holder = await other.acquire(res);
    const reads = fencedRead(stock, ["qty"]);
    expect(await locks.tryAcquire(res, { reads })).toBeNull();
    expect(await redis.hget(stock, "fence")).toBeNull();
    expect(await fencedWrite(redis, stock, holder.token!, -1)).toEqual({ ok: true, qty: 0 });
    await holder.release();
    await locks.close();
    await other.close();
  });
});

describe("fenced helpers refuse what they cannot do, saying why", () => {
  it("fields they would not read and a read list that is not one, before any Redis call", async () => {
    // `{ valu: "a" }` wrote to `qty`; `fencedRead(key, "qty")` read the fields "q", "t" and "y" (found by a probe).
    await expect(fencedWrite(redis, "stock:{x}", 1, 1, { valu: "a" } as never)).rejects.toMatchObject({
      name: "InvalidOptionError",
      option: "fields.valu",
    });
    expect(() => fencedRead("stock:{x}", "qty" as never)).toThrow(
      expect.objectContaining({ name: "InvalidOptionError", option: "read" }),
    );
    expect(() => fencedRead("stock:{x}", ["qty"], { value: "n" } as never)).toThrow(
      expect.objectContaining({ option: "fields.value" }),
    );
  });

  it("a field that holds no integer within 2^53 - 1: an error naming it, and nothing written", async () => {
    const { locks } = makeLocks(redis);
    for (const [field, stored] of [
      ["qty", "abc"],
      ["qty", "5.5"],
      ["fence", "x1"],
      ["fence", "100000000000000000000"],
    ] as const) {
      const stock = `stock:{${uniq("bad-field")}}`;
      await redis.hset(stock, field, stored);
      // A string compared with a number was a bare Lua error; 1e20 came back as -9223372036854776000.
      await expect(fencedWrite(redis, stock, 1, -1), `${field}=${stored}`).rejects.toThrow(
        `field "${field}" of ${stock} holds "${stored}", not an integer`,
      );
      expect(await redis.hgetall(stock)).toEqual({ [field]: stored });
    }
    const res = uniq("bad-fence-read");
    const stock = `stock:{${res}}`;
    await redis.hset(stock, "fence", "soon");
    const h = await locks.acquire(res, { reads: fencedRead(stock, ["qty"]) });
    await expect(h.reads).rejects.toThrow(`field "fence" of ${stock} holds "soon", not an integer`);
    expect(await redis.hgetall(stock)).toEqual({ fence: "soon" });
    await h.release();
    await locks.close();
  });
});
