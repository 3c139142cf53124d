// Issue 12, defect 3: a release whose reply was lost (it ran in Redis) must not be retried in the background
// while another local hold of the same key and owner (a re-entry) still shares the count: the retry would
// decrement a second time and free the lock under the re-entered handle.
import { describe, expect, it, vi } from "vitest";
import { createLocks, type LockEvent } from "../../src/index.js";
import { connectThrough, replyCutterForFile, sleep, uniq } from "../helpers.js";

const cut = replyCutterForFile();

describe("a release whose reply was lost, with a re-entry still held (defect 3)", () => {
  it("is not run twice: the key keeps count 1 under the re-entered handle and a third owner cannot take it", async () => {
    const redis = await connectThrough(cut.cutter.url);
    const events: LockEvent[] = [];
    const locks = createLocks({ redis, onEvent: (e) => events.push(e) });
    const third = createLocks({ redis: cut.direct });
    const res = uniq("acct");

    const h1 = await locks.acquire(res);
    const h2 = await locks.acquire(res, { owner: h1.owner });
    expect(h2.count).toBe(2);
    expect(await cut.direct.hget(h1.key, h1.owner)).toBe("2");

    // h1's release runs in Redis (count 2 → 1), but its reply never comes back; then the link is cut.
    cut.cutter.holdReplies();
    const releasing = h1.release().then(
      (r) => ({ answered: r }),
      (e: unknown) => e,
    );
    await vi.waitFor(async () => expect(await cut.direct.hget(h1.key, h1.owner)).toBe("1"), {
      timeout: 5_000,
      interval: 10,
    });
    cut.cutter.cut();
    const outcome = await releasing;
    expect(outcome).toBeInstanceOf(Error);

    // Background retries (if any) run every ~200 ms: give them plenty of time.
    await sleep(1_500);
    expect(h2.isHeld()).toBe(true);
    expect(await cut.direct.exists(h1.key)).toBe(1);
    expect(await cut.direct.hget(h1.key, h1.owner)).toBe("1");
    expect(await third.tryAcquire(res)).toBeNull();
    expect(events.filter((e) => e.type === "released" && e.late)).toEqual([]);

    // The re-entered handle still ends the hold cleanly.
    expect(await h2.release()).toBe("released");
    expect(await cut.direct.exists(h1.key)).toBe(0);
    await locks.close();
    await third.close();
    redis.disconnect();
  });
});
