import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocks, fencedWrite, InvalidOptionError, type Locks } from "../../src/index.js";
import { connect, sleep, uniq } from "../helpers.js";

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

describe("fencing", () => {
  it("tokens strictly increase across holders; a re-entry returns the same token; the fence key expires (retention) instead of living forever", async () => {
    const resource = uniq("tokens");
    const tokens: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, () =>
        locks.withLock(resource, async (h) => {
          expect(typeof h.token).toBe("number");
          tokens.push(h.token!);
          const again = await locks.acquire(resource, { waitMs: 0 });
          expect(again.token).toBe(h.token);
          await again.release();
        }),
      ),
    );
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
    expect(Number(await redis.get(`fence:{${resource}}`))).toBe(tokens.at(-1));
    const ttl = await redis.pttl(`fence:{${resource}}`);
    expect(ttl).toBeGreaterThan(86_000_000);
    expect(ttl).toBeLessThanOrEqual(86_400_000);
  });

  it("Kleppmann's pause: a holder whose lease ran out writes nothing with its stale token", async () => {
    const resource = uniq("pause");
    const stock = `stock:{${resource}}`;
    await redis.hset(stock, "qty", 10, "fence", 0);
    const a = await locks.acquire(resource, { leaseMs: 200 });
    await sleep(300); // A "pauses" (GC, VM migration) past its lease
    const b = await locks.acquire(resource, { leaseMs: 2_000 });
    expect(b.token!).toBeGreaterThan(a.token!);
    expect(await fencedWrite(redis, stock, b.token!, -1)).toEqual({ ok: true, qty: 9 });
    expect(await fencedWrite(redis, stock, a.token!, -1)).toEqual({
      ok: false,
      reason: "STALE",
      fence: b.token,
    });
    expect(await redis.hgetall(stock)).toEqual({ qty: "9", fence: String(b.token) });
    expect(await fencedWrite(redis, stock, b.token!, -2)).toEqual({ ok: true, qty: 7 });
    await b.release();
    expect(await a.release()).toBe("not-owner");
  });

  it("fencedWrite on a fresh key starts at fence 0, and rejects bad input without a Redis call", async () => {
    const stock = `stock:{${uniq("fresh")}}`;
    expect(await fencedWrite(redis, stock, 1, 5)).toEqual({ ok: true, qty: 5 });
    await expect(fencedWrite(redis, stock, -1, 1)).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(fencedWrite(redis, stock, 1, 0.5)).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(fencedWrite(redis, "", 1, 1)).rejects.toBeInstanceOf(InvalidOptionError);
  });
});
