import { describe, expect, it } from "vitest";
import { orderSummary } from "./order-summary";

const attempt = (outcome: "created" | "replayed" | "conflict" | "error", detail = "") => ({
  outcome,
  detail,
});

describe("orderSummary", () => {
  it("says every client failed, and why, instead of 'it already existed'", () => {
    const s = orderSummary([
      attempt("error", "The API cannot reach Redis"),
      attempt("error", "The API cannot reach Redis"),
    ]);
    expect(s).toBe("Every client failed, so nothing was created: The API cannot reach Redis");
  });

  it("keeps the race's own outcomes", () => {
    expect(orderSummary([attempt("created"), attempt("conflict")])).toBe(
      "Exactly one client created the order.",
    );
    expect(orderSummary([attempt("replayed"), attempt("conflict")])).toMatch(/already existed/);
    expect(orderSummary([attempt("created"), attempt("created")])).toMatch(/double order/);
  });
});
