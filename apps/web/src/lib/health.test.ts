import { describe, expect, it } from "vitest";
import { dashboardHealth } from "./health";

describe("dashboardHealth", () => {
  it("is degraded and stale when the stream is up but the API cannot reach Redis", () => {
    const h = dashboardHealth("connected", false);
    expect(h.indicator).toBe("degraded");
    expect(h.stale).toBe(true);
    expect(h.advice).toMatch(/Redis/);
  });

  it("is live when Redis answers, or before system.info has answered", () => {
    for (const reachable of [true, undefined])
      expect(dashboardHealth("connected", reachable)).toEqual({
        indicator: "connected",
        stale: false,
        advice: null,
      });
  });

  it("follows the stream while it is down", () => {
    expect(dashboardHealth("offline", false)).toEqual({ indicator: "offline", stale: true, advice: null });
  });
});
