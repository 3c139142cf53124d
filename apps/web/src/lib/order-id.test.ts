import { describe, expect, it } from "vitest";
import { readOrderId } from "./order-id";

describe("readOrderId", () => {
  it("refuses an id of only spaces instead of sending an empty one", () => {
    expect(readOrderId("   ")).toEqual({ ok: false, message: "Enter an order id." });
  });

  it("applies the API's rule: 1-64 of [A-Za-z0-9_-]", () => {
    expect(readOrderId(" ord-1_a ")).toEqual({ ok: true, value: "ord-1_a" });
    for (const raw of ["ord 1", "ord/1", "x".repeat(65)]) expect(readOrderId(raw).ok).toBe(false);
  });
});
