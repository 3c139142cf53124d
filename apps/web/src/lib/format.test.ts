import { describe, expect, it } from "vitest";
import { formatSeconds } from "./format";

describe("formatSeconds", () => {
  it("shows every duration in seconds", () => {
    expect(formatSeconds(920)).toBe("0.92 s");
    expect(formatSeconds(2613)).toBe("2.61 s");
    expect(formatSeconds(12_340)).toBe("12.3 s");
    expect(formatSeconds(3.6)).toBe("0.004 s");
    expect(formatSeconds(0.2)).toBe("< 0.001 s");
    expect(formatSeconds(Number.NaN)).toBe("–");
  });
});
