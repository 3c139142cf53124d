// Rule 7, "a reply lost after Redis ran the command", for a semaphore waiter that gives up and passes its
// process's place in the queue to the next waiter (shared-leave.ts with a successor): the leave ran, its reply was
// lost with the connection. The successor was named in that leave and may not attempt until the leave is
// answered; a lost answer must still free it (core settleNamed), or it would stay named, never look again, and
// lose the place it was given once its entry's lease ran out.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { startReplyCutter } from "../../../../scripts/lib/reply-cutter.mjs";
import { connect, connectThrough, makeLocks, sleep, uniq } from "../helpers.js";

let cutter: Awaited<ReturnType<typeof startReplyCutter>>;
let direct: Redis;
beforeAll(async () => {
  cutter = await startReplyCutter(inject("redisUrl"));
  direct = connect();
});
afterAll(async () => {
  direct.disconnect();
  await cutter.close();
});

const queueOf = (name: string) => `lock:semaphore:queue:{${name}}`;

it("a semaphore leave whose reply was lost: the successor keeps the place it was given and gets the permit first", async () => {
  const through = await connectThrough(cutter.url);
  const other = connect();
  const holder = makeLocks(direct);
  const a = makeLocks(through, { instanceId: "leave-lost-a", retry: { maxMs: 300 } });
  const b = makeLocks(other, { instanceId: "leave-lost-b", retry: { maxMs: 5_000 } });
  const name = uniq("leave-lost");
  const held = await holder.locks.semaphore(name, 1).acquire();
  const gaveUp = new AbortController();
  const a1 = a.locks.semaphore(name, 1).acquire({ waitMs: 10_000, signal: gaveUp.signal });
  while ((await direct.llen(queueOf(name))) < 1) await sleep(5);
  const a2 = a.locks.semaphore(name, 1).acquire({ waitMs: 10_000 });
  const b1 = b.locks.semaphore(name, 1).acquire({ waitMs: 10_000 });
  while ((await direct.llen(queueOf(name))) < 2) await sleep(5);
  const [aEntry, bEntry] = await direct.lrange(queueOf(name), 0, -1);

  cutter.holdReplies();
  gaveUp.abort(new Error("a1 gives up"));
  await expect(a1).rejects.toThrow("a1 gives up");
  // The leave ran in Redis (a2 in a1's place) but its answer is held back; then the connection goes.
  await expect
    .poll(async () => {
      const q = await direct.lrange(queueOf(name), 0, -1);
      return q.length === 2 && q[0] !== aEntry && q[1] === bEntry;
    })
    .toBe(true);
  cutter.cut();

  const order: string[] = [];
  const a2Held = a2.then((h) => {
    order.push("a2");
    return h;
  });
  const b1Held = b1.then((h) => {
    order.push("b1");
    return h;
  });
  // Longer than a2's entry lease would last unrefreshed (queueLeaseMs, 1.56 s): only a2's own looks keep it.
  await sleep(2_000);
  expect(await direct.lindex(queueOf(name), 0)).not.toBe(bEntry);
  await held.release();
  const h2 = await a2Held;
  await sleep(50);
  expect(order).toEqual(["a2"]);
  await h2.release();
  const hb = await b1Held;
  expect(order).toEqual(["a2", "b1"]);
  await hb.release();
  for (const l of [holder, a, b]) await l.locks.close();
  through.disconnect();
  other.disconnect();
});
