import { TRPCError } from "@trpc/server";
import type { Order } from "../types.js";
import type { SubmitRequest } from "./submit.js";

/** What an order asks for, as one line: `2 × 1001 (seed order)` or `items 1 × a, 3 × b`. */
function asked(fromStock: boolean, items: readonly { productId: string; quantity: number }[]): string {
  const list = [...items]
    .sort((a, b) => a.productId.localeCompare(b.productId))
    .map((i) => `${i.quantity} × ${i.productId}`)
    .join(", ");
  return fromStock ? `items ${list}` : `${list} (productId and quantity, no items)`;
}

/**
 * A resubmission replays the stored order only if it asks for the same thing. An id reused for another order
 * replayed the first one silently: the client believed its new order placed while nothing of it was.
 */
export function assertSameOrder(existing: Order, req: SubmitRequest): void {
  const wanted = req.items
    ? asked(true, req.items)
    : asked(false, [{ productId: req.productId ?? "", quantity: req.quantity ?? 1 }]);
  const stored = asked(existing.fromStock, existing.items);
  if (wanted === stored) return;
  throw new TRPCError({
    code: "CONFLICT",
    message: `order id ${req.orderId} was already used for a different order (${stored}); this one (${wanted}) was not placed: submit it under a new order id`,
  });
}
