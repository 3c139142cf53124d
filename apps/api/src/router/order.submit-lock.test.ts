import { setTimeout as sleep } from "node:timers/promises";
import { lockKey } from "@lockyard/lock";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testContext, uid } from "../../test/context.js";
import { createOrder } from "../orders/store.js";
import { stockResource } from "../stock/keys.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  // The Locks' lease is 2 s; the submit lock used to have a fixed 5 s one.
  t = await testContext({ config: { orderProcessingMs: 400, lockWaitMs: 15_000 } });
});
afterAll(() => t.close());

const code = (err: unknown) => (err instanceof TRPCError ? err.code : String(err));
const qty = async (productId: string) => (await t.caller.stock.get({ productId })).qty;
const submitLockKey = (orderId: string) => lockKey("lock:", `order:submit:${orderId}`);

async function product(stock: number): Promise<string> {
  const productId = uid("p");
  await t.caller.stock.reset({ productId, qty: stock });
  return productId;
}

describe("the submit lock of an order of items", () => {
  it("stays held while the order waits for its stock lock past 5 s: a resubmission gets CONFLICT, one order, stock taken once", async () => {
    const productId = await product(10);
    const orderId = uid("o");
    const order = { orderId, items: [{ productId, quantity: 1 }] };
    const stockHeld = await t.locks.acquire(stockResource(productId));
    const outcome = (answer: Promise<{ replayed: boolean }>) =>
      answer.then(
        (a) => (a.replayed ? "replayed" : "created"),
        (e: unknown) => code(e),
      );
    const first = outcome(t.caller.order.submit(order));
    await sleep(5_500);
    const second = outcome(t.caller.order.submit(order));
    await sleep(200);
    await stockHeld.release();
    const answers = await Promise.all([first, second]);
    expect(answers).toEqual(["created", "CONFLICT"]);
    expect(await qty(productId)).toBe(9);
  }, 20_000);

  it("lost while the order waits for its stock lock: the wait ends at once, nothing is taken, the answer says try again", async () => {
    const productId = await product(10);
    const orderId = uid("o");
    const stockHeld = await t.locks.acquire(stockResource(productId));
    const submitting = t.caller.order
      .submit({ orderId, items: [{ productId, quantity: 1 }] })
      .catch((e) => e);
    await vi.waitFor(async () => expect(await t.redis.exists(submitLockKey(orderId))).toBe(1), {
      interval: 10,
    });
    await t.redis.del(submitLockKey(orderId));
    // The watchdog's next renewal (lease/3) is refused: the lock is lost, and the stock wait with it.
    const answer = await Promise.race([submitting, sleep(4_000, "still waiting")]);
    await stockHeld.release();
    expect(code(answer)).toBe("SERVICE_UNAVAILABLE");
    expect((answer as Error).message).toMatch(
      /was lost before order .* was written.*nothing was taken, try again/,
    );
    expect(await qty(productId)).toBe(10);
    expect(await t.caller.order.get({ orderId })).toBeNull();
  });

  it("an order created meanwhile by another submit stands, and this one gives its stock back", async () => {
    const productId = await product(10);
    const orderId = uid("o");
    const submitting = t.caller.order.submit({ orderId, items: [{ productId, quantity: 2 }] });
    // In the processing (the stock lock held), another instance's submit creates the order, as it could once
    // this one's lock was lost after its check.
    await vi.waitFor(
      async () => expect(await t.redis.exists(lockKey("lock:", stockResource(productId)))).toBe(1),
      { interval: 10 },
    );
    const other = {
      orderId,
      productId,
      quantity: 2,
      status: "created" as const,
      createdAt: Date.now(),
      instanceId: "other-instance",
      token: 1,
      items: [{ productId, quantity: 2, token: 1 }],
      fromStock: true,
    };
    expect(await createOrder(t.redis, other, 60_000)).toBe("created");
    const answer = await submitting;
    expect(answer).toEqual({ order: other, replayed: true });
    expect(await t.caller.order.get({ orderId })).toEqual(other);
    // Taken by the other submit's deduction in a real run; this one's own deduction went back.
    expect(await qty(productId)).toBe(10);
  });
});
