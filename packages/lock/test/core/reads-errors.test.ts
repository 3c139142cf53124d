// Issue 12, defect 7: a `reads` function that throws, or returns something other than a promise, is the
// caller's bug. It must neither orphan the lock the attempt was granted (held for its lease by nobody) nor
// surface as an unhandled rejection: the lock is free again at once and the error reaches the caller.
import net from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { fenceKey, InvalidOptionError, lockKey, type ReadsFn } from "../../src/index.js";
import { connect, makeLocks, sleep, uniq } from "../helpers.js";

let redis: Redis;
let other: Redis;
beforeAll(() => {
  redis = connect();
  other = connect();
});
afterAll(() => {
  redis.disconnect();
  other.disconnect();
});

/** The attempt ran in Redis (it took a token) and the lock is free again. */
async function expectFreeAfterGrant(res: string) {
  await vi.waitFor(
    async () => {
      expect(await other.exists(fenceKey(res))).toBe(1);
      expect(await other.exists(lockKey("lock:", res))).toBe(0);
    },
    { timeout: 1_000, interval: 10 },
  );
  const { locks: theirs } = makeLocks(other);
  const h = await theirs.tryAcquire(res);
  expect(h).not.toBeNull();
  await h!.release();
  await theirs.close();
}

describe("a broken reads function (defect 7)", () => {
  it("one that throws: acquire rejects with its error and the granted lock is released at once", async () => {
    const { locks, events } = makeLocks(redis);
    const res = uniq("stock");
    const boom = new Error("reads blew up");
    const reads = (() => {
      throw boom;
    }) as ReadsFn;
    const outcome = await locks.acquire(res, { reads }).then(
      () => "acquired",
      (e: unknown) => e,
    );
    expect(outcome).toBe(boom);
    await expectFreeAfterGrant(res);
    expect(events.filter((e) => e.type === "acquired")).toEqual([]);
    await locks.close();
  });

  it("one that returns a non-promise: acquire rejects with InvalidOptionError and the lock is released", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("stock");
    const reads = (() => 42) as unknown as ReadsFn;
    const outcome = await locks.acquire(res, { reads }).then(
      () => "acquired",
      (e: unknown) => e,
    );
    expect(outcome).toBeInstanceOf(InvalidOptionError);
    await expectFreeAfterGrant(res);
    await locks.close();
  });

  it("withLock with a throwing reads never runs its callback and leaves the lock free", async () => {
    const { locks } = makeLocks(redis);
    const res = uniq("stock");
    const boom = new Error("reads blew up");
    let ran = false;
    const outcome = await locks
      .withLock(
        res,
        () => {
          ran = true;
        },
        {
          reads: (() => {
            throw boom;
          }) as ReadsFn,
        },
      )
      .catch((e: unknown) => e);
    expect(outcome).toBe(boom);
    expect(ran).toBe(false);
    await expectFreeAfterGrant(res);
    await locks.close();
  });
});

describe("the release of a grant a broken reads refused, lost on its way (found by the simulation)", () => {
  it("is retried in the background: the lock is free long before its lease", async () => {
    // Seeds 9103443 and 9106975 of --extra --key-loss: the connection died as that release was sent, and the
    // lock stayed held by nobody for its whole lease. Here a proxy forwards the grant's reply and then drops
    // every request (the release never reaches Redis) until the connection is cut.
    const proxy = await startRequestDropper(inject("redisUrl"));
    const conn = new Redis(proxy.url);
    conn.on("error", () => {});
    const { locks } = makeLocks(conn);
    try {
      const res = uniq("orphan-lost");
      const warm = await locks.tryAcquire(uniq("warm"));
      await warm!.release();
      const boom = new Error("reads blew up");
      proxy.dropAfterNextReply();
      const outcome = await locks
        .tryAcquire(res, {
          leaseMs: 20_000,
          reads: (() => {
            throw boom;
          }) as ReadsFn,
        })
        .then(
          () => "acquired",
          (e: unknown) => e,
        );
      expect(outcome).toBe(boom);
      await sleep(50);
      expect(await other.exists(lockKey("lock:", res))).toBe(1);
      proxy.cut();
      await expectFreeAfterGrant(res);
    } finally {
      await locks.close();
      conn.disconnect();
      await proxy.close();
    }
  });
});

/**
 * A TCP proxy to Redis that, once armed, forwards the next reply and then drops every request until cut();
 * connections made after the cut are forwarded both ways again.
 */
async function startRequestDropper(targetUrl: string) {
  const target = new URL(targetUrl);
  const sockets = new Set<net.Socket>();
  let armed = false;
  let dropping = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.on("data", (d) => {
      if (!dropping) upstream.write(d);
    });
    upstream.on("data", (d) => {
      client.write(d);
      if (armed) [armed, dropping] = [false, true];
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    dropAfterNextReply() {
      armed = true;
    },
    cut() {
      dropping = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
