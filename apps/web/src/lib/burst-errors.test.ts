import { describe, expect, it } from "vitest";
import { failedRequestsNote } from "./burst-errors";

describe("failedRequestsNote", () => {
  it("names the failed requests beside a verdict", () => {
    expect(failedRequestsNote({ errors: 100, requests: 200 })).toBe("100 of 200 requests failed");
  });

  it("is absent when every request got an answer", () => {
    expect(failedRequestsNote({ errors: 0, requests: 200 })).toBeNull();
  });
});
