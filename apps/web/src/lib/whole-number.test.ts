import { describe, expect, it } from "vitest";
import { readWholeNumber } from "./whole-number";

describe("readWholeNumber", () => {
  it("reads exponent notation as the browser does: 1e3 is 1000, not 1", () => {
    expect(readWholeNumber("1e3", 1, 1000)).toEqual({ ok: true, value: 1000 });
    expect(readWholeNumber("1e5", 0, 100_000)).toEqual({ ok: true, value: 100_000 });
  });

  it("turns an empty (or unparsable) field into a message, not a default", () => {
    expect(readWholeNumber("", 1, 1000)).toEqual({
      ok: false,
      message: "Enter a whole number from 1 to 1000.",
    });
    expect(readWholeNumber("   ", 1, 20).ok).toBe(false);
  });

  it("refuses fractions and values out of range", () => {
    for (const raw of ["2.5", "-1", "0", "21"]) expect(readWholeNumber(raw, 1, 20).ok).toBe(false);
  });
});
