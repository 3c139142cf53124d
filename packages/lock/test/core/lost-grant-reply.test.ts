// Rule 7, "a reply lost after Redis ran the command", for acquire: the grant ran, its reply was lost with the
// connection. The caller gets a connection error and holds nothing; before, the lock stayed held by that
// fresh owner name, which nobody would ever release, and everyone waited out its lease (30 s by default).
// Found by the simulation with --extra (seed 3528: a connection killed right after a grant, 3 s leases).
import { describe, expect, it, vi } from "vitest";
import { createLocks } from "../../src/index.js";
import { connectThrough, replyCutterForFile, uniq } from "../helpers.js";

const cut = replyCutterForFile();

describe("an acquire whose grant ran in Redis but whose reply was lost", () => {
  it("fails, and the grant nobody holds is released in the background, long before its lease ends", async () => {
    const redis = await connectThrough(cut.cutter.url);
    const locks = createLocks({ redis });
    const res = uniq("ghost");

    cut.cutter.holdReplies();
    const acquiring = locks.acquire(res, { leaseMs: 60_000 }).then(
      () => "acquired",
      (e: unknown) => e,
    );
    // The grant ran: Redis has the lock under an owner name only the lost reply carried.
    await vi.waitFor(async () => expect(await cut.direct.exists(`lock:{${res}}`)).toBe(1), {
      timeout: 5_000,
      interval: 10,
    });
    cut.cutter.cut();
    expect(await acquiring).toBeInstanceOf(Error);

    // The connection comes back by itself; the background release (every ~200 ms) frees the key.
    await vi.waitFor(async () => expect(await cut.direct.exists(`lock:{${res}}`)).toBe(0), {
      timeout: 10_000,
      interval: 50,
    });
    const other = createLocks({ redis: cut.direct });
    const h = await other.acquire(res, { waitMs: 0 });
    await h.release();
    await other.close();
    await locks.close();
    redis.disconnect();
  });

  it("a refused attempt whose reply was lost leaves the queue Redis put its owner in", async () => {
    const redis = await connectThrough(cut.cutter.url);
    const locks = createLocks({ redis, retry: { queueLeaseMs: 20_000 } });
    const holder = createLocks({ redis: cut.direct });
    const res = uniq("ghost-entry");
    const held = await holder.acquire(res);

    cut.cutter.holdReplies();
    const acquiring = locks.acquire(res, { waitMs: 10_000 }).then(
      () => "acquired",
      (e: unknown) => e,
    );
    // The attempt ran: refused, and its owner joined the queue; only the lost reply would tell the waiter.
    const queue = `queue:{${res}}`;
    await vi.waitFor(async () => expect(await cut.direct.llen(queue)).toBe(1), {
      timeout: 5_000,
      interval: 10,
    });
    cut.cutter.cut();
    expect(await acquiring).toBeInstanceOf(Error);

    // Without the leave the entry would stay 20 s, and the release would hand the lock to nobody.
    await vi.waitFor(async () => expect(await cut.direct.llen(queue)).toBe(0), {
      timeout: 5_000,
      interval: 50,
    });
    expect(await held.release()).toBe("released");
    expect(await cut.direct.exists(`lock:{${res}}`)).toBe(0);
    await holder.close();
    await locks.close();
    redis.disconnect();
  });

  it("a refused writer whose reply was lost takes back the mark that keeps readers out", async () => {
    const redis = await connectThrough(cut.cutter.url);
    const writer = createLocks({ redis, retry: { queueLeaseMs: 20_000 } });
    const others = createLocks({ redis: cut.direct });
    const res = uniq("ghost-writer");
    const key = `lock:rw:{${res}}`;
    const read = await others.readWrite(res).read.acquire();

    cut.cutter.holdReplies();
    const writing = writer
      .readWrite(res)
      .write.acquire({ waitMs: 10_000 })
      .then(
        () => "acquired",
        (e: unknown) => e,
      );
    // The attempt ran: refused, and it marked the lock so that new readers wait (for 20 s).
    await vi.waitFor(async () => expect(await cut.direct.hexists(key, "~writer-waits")).toBe(1), {
      timeout: 5_000,
      interval: 10,
    });
    cut.cutter.cut();
    expect(await writing).toBeInstanceOf(Error);

    // Without the withdraw a reader would be refused until the mark ran out.
    await vi.waitFor(async () => expect(await cut.direct.hexists(key, "~writer-waits")).toBe(0), {
      timeout: 5_000,
      interval: 50,
    });
    const second = await others.readWrite(res).read.tryAcquire();
    expect(second).not.toBeNull();
    await Promise.all([read.release(), second!.release()]);
    await others.close();
    await writer.close();
    redis.disconnect();
  });
});
