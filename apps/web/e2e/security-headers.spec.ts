import { expect, openDashboard, test } from "./fixtures";

test.describe("Security headers", () => {
  test("the dashboard sends a CSP naming the API origins, frame-ancestors, nosniff and a Referrer-Policy", async ({
    page,
    stack,
    consoleErrors,
  }) => {
    const res = await page.request.get(stack.webUrl);
    const headers = res.headers();
    const csp = headers["content-security-policy"] ?? "";
    const connect = /connect-src ([^;]+)/.exec(csp)?.[1]?.split(" ") ?? [];
    for (const url of stack.apiUrls) expect(connect).toContain(new URL(url).origin);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
    expect(headers["x-frame-options"]).toBe("DENY");
    // The policy does not break the page: the live stream (SSE to the API) connects, and nothing is blocked.
    await openDashboard(page, stack.webUrl);
    expect(consoleErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  });
});
