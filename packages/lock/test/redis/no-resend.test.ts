// Rule 7, "a reply lost after Redis ran the command", with ioredis as most people construct it: `new Redis(url)`,
// which re-sends every unanswered command after a reconnect (autoResendUnfulfilledCommands). A lock script that
// ran and is sent again runs twice. The library's scripts are never re-sent (src/redis/no-resend.ts); each of
// these tests fails without that guard (the first one with two holders).
import { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import { createLocks, fencedWrite, isRedisUnavailable, ReplyLostError } from "../../src/index.js";
import { replyCutterForFile, sleep, uniq } from "../helpers.js";

const cut = replyCutterForFile();

/** A client with ioredis's defaults (re-sending on), through the cutter. */
async function defaultClient(extra: Record<string, unknown> = {}): Promise<Redis> {
  const redis = new Redis(cut.cutter.url, { ...extra });
  redis.on("error", () => {});
  await redis.ping();
  return redis;
}

/** Runs `call` with its reply held back until Redis shows `ran`, then drops every connection. */
async function loseReply<T>(call: () => Promise<T>, ran: () => Promise<boolean>): Promise<T | unknown> {
  cut.cutter.holdReplies();
  const settled = call().then(
    (v) => v,
    (e: unknown) => e,
  );
  await vi.waitFor(async () => expect(await ran()).toBe(true), { timeout: 5_000, interval: 5 });
  cut.cutter.cut();
  return settled;
}

describe("the library's scripts are never re-sent after a reconnect", () => {
  it("a re-entered release whose reply was lost leaves the outer hold held: no second holder", async () => {
    const redis = await defaultClient();
    const locks = createLocks({ redis });
    const res = uniq("resend-reentry");
    const key = `lock:{${res}}`;
    const outer = await locks.acquire(res);
    const inner = await locks.acquire(res, { owner: outer.owner });
    expect(inner.count).toBe(2);

    const result = await loseReply(
      () => inner.release(),
      async () => (await cut.direct.hget(key, outer.owner)) === "1",
    );
    // The client reconnects by itself; with the release sent again, the count would be 0 and the lock free.
    await vi.waitFor(async () => expect(await redis.ping()).toBe("PONG"), { timeout: 5_000 });
    await sleep(100);
    const other = createLocks({ redis: cut.direct });
    expect(await other.tryAcquire(res)).toBeNull();
    expect(await cut.direct.hget(key, outer.owner)).toBe("1");
    expect(outer.isHeld()).toBe(true);
    expect(result).toBeInstanceOf(ReplyLostError);
    expect(isRedisUnavailable(result)).toBe(true);
    expect((result as ReplyLostError).command).toBe("lockyardRelease");
    expect(await outer.release()).toBe("released");
    expect(await cut.direct.exists(key)).toBe(0);
    await other.close();
    await locks.close();
    redis.disconnect();
  });

  it("the same for a semaphore permit held twice by one owner", async () => {
    const redis = await defaultClient();
    const locks = createLocks({ redis });
    const res = uniq("resend-permit");
    const key = `lock:semaphore:{${res}}`;
    const sem = locks.semaphore(res, 1);
    const outer = await sem.acquire();
    const inner = await sem.acquire({ owner: outer.owner });
    expect(inner.count).toBe(2);

    const result = await loseReply(
      () => inner.release(),
      async () => (await cut.direct.hget(key, outer.owner))?.startsWith("1|") === true,
    );
    await vi.waitFor(async () => expect(await redis.ping()).toBe("PONG"), { timeout: 5_000 });
    await sleep(100);
    const other = createLocks({ redis: cut.direct });
    expect(await other.semaphore(res, 1).tryAcquire()).toBeNull();
    expect((await cut.direct.hget(key, outer.owner))?.startsWith("1|")).toBe(true);
    expect(result).toBeInstanceOf(ReplyLostError);
    expect(await outer.release()).toBe("released");
    await other.close();
    await locks.close();
    redis.disconnect();
  });

  it("a grant whose reply was lost is not raised to a re-entry: the lock is free again long before its lease ends", async () => {
    const redis = await defaultClient();
    const locks = createLocks({ redis });
    const res = uniq("resend-grant");
    const key = `lock:{${res}}`;

    const result = await loseReply(
      () => locks.acquire(res, { leaseMs: 60_000 }),
      async () => (await cut.direct.exists(key)) === 1,
    );
    expect(result).toBeInstanceOf(ReplyLostError);
    // Sent again, the grant would count 2 under an owner nobody holds, for its 60 s lease. Not sent again, the
    // core releases the grant nobody holds in the background once the connection is back.
    await vi.waitFor(async () => expect(await cut.direct.exists(key)).toBe(0), {
      timeout: 5_000,
      interval: 20,
    });
    const other = createLocks({ redis: cut.direct });
    const h = await other.acquire(res, { waitMs: 0 });
    await h.release();
    await other.close();
    await locks.close();
    redis.disconnect();
  });

  it("a fenced write whose reply was lost takes its delta once, and says its outcome is unknown", async () => {
    const redis = await defaultClient();
    const stock = `stock:{${uniq("resend-stock")}}`;
    await cut.direct.hset(stock, "qty", 10, "fence", 0);

    const result = await loseReply(
      () => fencedWrite(redis, stock, 5, -1),
      async () => (await cut.direct.hget(stock, "qty")) === "9",
    );
    await vi.waitFor(async () => expect(await redis.ping()).toBe("PONG"), { timeout: 5_000 });
    await sleep(100);
    expect(await cut.direct.hget(stock, "qty")).toBe("9");
    expect(result).toBeInstanceOf(ReplyLostError);
    await cut.direct.del(stock);
    redis.disconnect();
  });

  it("with re-sending off and no commandTimeout, a release whose reply was lost settles instead of waiting forever", async () => {
    const redis = await defaultClient({ autoResendUnfulfilledCommands: false });
    const locks = createLocks({ redis });
    const res = uniq("no-resend-no-timeout");
    const h = await locks.acquire(res);
    const result = await Promise.race([
      loseReply(
        () => h.release(),
        async () => (await cut.direct.exists(`lock:{${res}}`)) === 0,
      ),
      sleep(5_000).then(() => "still waiting after 5 s"),
    ]);
    expect(result).toBeInstanceOf(ReplyLostError);
    await locks.close();
    redis.disconnect();
  });

  it("the user's own commands keep the client's setting: an unanswered INCR is still re-sent", async () => {
    const redis = await defaultClient();
    createLocks({ redis });
    const counter = uniq("user-counter");
    const result = await loseReply(
      () => redis.incr(counter),
      async () => (await cut.direct.get(counter)) === "1",
    );
    expect(result).toBe(2);
    await cut.direct.del(counter);
    redis.disconnect();
  });
});
