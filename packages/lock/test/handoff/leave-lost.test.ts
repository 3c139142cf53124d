// Rule 7 for the mutex's waiter queue, "a connection killed mid-call": a queued waiter that gives up sends a leave.
// When that leave was lost with its connection, the waiter's entry stayed in the store's queue until its lease ran
// out, and a release in another process handed the lock to it: held by nobody for up to an entry's lease (and a
// claim lease more) while the next process waited. Found by the simulation's "held by nobody" check (I11, plain
// seed 79). The leave is now retried in the background once the connection is back, as a release is.
import { expect, it } from "vitest";
import { queueKeyOf } from "../../src/resource.js";
import { connect, connectThrough, makeLocks, replyCutterForFile, sleep, uniq, within } from "../helpers.js";

const QUEUE_LEASE_MS = 6_000;
const cut = replyCutterForFile();

/** The owner names queued for `resource` in the store. */
const queued = (resource: string) => cut.direct.lrange(queueKeyOf(`lock:{${resource}}`), 0, -1);

async function until(what: string, check: () => Promise<boolean>, ms = 3_000): Promise<void> {
  const end = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`still not ${what} after ${ms} ms`);
    await sleep(10);
  }
}

it("a queued waiter whose leave was lost with its connection leaves once it is back: the next process gets the lock long before an entry's lease", async () => {
  const through = await connectThrough(cut.cutter.url);
  const other = connect();
  const retry = { queueLeaseMs: QUEUE_LEASE_MS };
  const holder = makeLocks(cut.direct, { instanceId: "leave-lost-holder", retry });
  const a = makeLocks(through, { instanceId: "leave-lost-a", retry });
  const b = makeLocks(other, { instanceId: "leave-lost-b", retry });
  const resource = uniq("leave-lost");
  const held = await holder.locks.acquire(resource);
  const gaveUp = new AbortController();
  const a1 = a.locks.acquire(resource, { waitMs: 20_000, signal: gaveUp.signal });
  await until("queued", async () => (await queued(resource)).length === 1);
  const b1 = b.locks.acquire(resource, { waitMs: 20_000 });
  await until("both queued", async () => (await queued(resource)).length === 2);
  const [aEntry] = await queued(resource);
  expect(aEntry).toMatch(/^leave-lost-a:/);

  // Nothing the waiter's process sends reaches Redis: its leave goes nowhere; then its connection goes.
  cut.cutter.dropRequests();
  gaveUp.abort(new Error("a1 gives up"));
  await expect(a1).rejects.toThrow("a1 gives up");
  await sleep(100);
  cut.cutter.cut();
  // Its entry goes once the connection is back, well within the 6 s the entry's lease would keep it.
  await until("left", async () => !(await queued(resource)).includes(aEntry!));

  await held.release();
  const next = await within(b1, 2_000);
  expect(next, "the lock went to the dead entry: held by nobody for a queue lease").not.toBe("still waiting");
  if (next !== "still waiting") await next.release();
  for (const l of [holder, a, b]) await l.locks.close();
  through.disconnect();
  other.disconnect();
});
