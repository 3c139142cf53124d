// Rule 7, "a reply lost after Redis ran the command", for a semaphore waiter that gives up and passes its
// process's place in the queue to the next waiter (shared-leave.ts with a successor): the leave ran, its reply was
// lost with the connection. The successor was named in that leave and may not attempt until the leave is
// answered; a lost answer must still free it (core settleNamed), or it would stay named, never look again, and
// lose the place it was given once its entry's lease ran out.
import { expect, it } from "vitest";
import { connect, connectThrough, makeLocks, replyCutterForFile, sleep } from "../helpers.js";
import { grantedInOrder, queueOf, successorFirst, twoProcessesQueued } from "./semaphore-place.js";

const cut = replyCutterForFile();

it("a semaphore leave whose reply was lost: the successor keeps the place it was given and gets the permit first", async () => {
  const through = await connectThrough(cut.cutter.url);
  const other = connect();
  const holder = makeLocks(cut.direct);
  const a = makeLocks(through, { instanceId: "leave-lost-a", retry: { maxMs: 300 } });
  const b = makeLocks(other, { instanceId: "leave-lost-b", retry: { maxMs: 5_000 } });
  const { name, held, gaveUp, a1, a2, b1, aEntry, bEntry } = await twoProcessesQueued(
    cut.direct,
    holder.locks,
    a.locks,
    b.locks,
  );

  cut.cutter.holdReplies();
  gaveUp.abort(new Error("a1 gives up"));
  await expect(a1).rejects.toThrow("a1 gives up");
  // The leave ran in Redis (a2 in a1's place) but its answer is held back; then the connection goes.
  await successorFirst(cut.direct, name, aEntry, bEntry);
  cut.cutter.cut();
  // Longer than a2's entry lease would last unrefreshed (queueLeaseMs, 1.56 s): only a2's own looks keep it.
  await sleep(2_000);
  expect(await cut.direct.lindex(queueOf(name), 0)).not.toBe(bEntry);
  await grantedInOrder(held, a2, b1);
  for (const l of [holder, a, b]) await l.locks.close();
  through.disconnect();
  other.disconnect();
});
