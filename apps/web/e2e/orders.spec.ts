import { collectConsoleErrors, expect, openDashboard, screenshot, test, uniqueResource } from "./fixtures";

// A lost race answers 409 CONFLICT and a bad id 400, which Chromium logs as failed resource loads.
test.use({ allowedConsoleErrors: /status of (409|400)/ });

test.describe("Orders panel", () => {
  test("five clients on one page submit the same order: exactly one creates it", async ({ page, stack }) => {
    await openDashboard(page, stack.webUrl);
    const orderId = uniqueResource("ord");
    await page.getByTestId("order-id").fill(orderId);
    await page.getByTestId("order-parallel").fill("5");
    await page.getByTestId("order-submit").click();

    const attempts = page.getByTestId("order-attempt");
    await expect(attempts).toHaveCount(5);
    await expect(page.locator('[data-testid="order-attempt"][data-outcome="pending"]')).toHaveCount(0);
    await expect(page.locator('[data-testid="order-attempt"][data-outcome="created"]')).toHaveCount(1);
    await expect(page.locator('[data-testid="order-attempt"][data-outcome="error"]')).toHaveCount(0);
    await expect(page.getByTestId("order-summary")).toHaveAttribute("data-created", "1");
    await expect(page.locator(`[data-testid="order-row"][data-order="${orderId}"]`)).toHaveCount(1);

    // Submitting again later replays the stored order instead of creating another.
    await page.getByTestId("order-parallel").fill("1");
    await page.getByTestId("order-submit").click();
    await expect(page.locator('[data-testid="order-attempt"][data-outcome="replayed"]')).toHaveCount(1);
    await screenshot(page, "orders-panel", "panel-orders");
  });

  test("five browser contexts click Submit for the same order at once: one order across them", async ({
    browser,
    stack,
  }) => {
    const orderId = uniqueResource("ord5");
    const contexts = await Promise.all(Array.from({ length: 5 }, () => browser.newContext()));
    const pages = await Promise.all(contexts.map((c) => c.newPage()));
    const errors: string[] = [];
    for (const p of pages) collectConsoleErrors(p, errors, /status of 409/);
    await Promise.all(pages.map((p) => openDashboard(p, stack.webUrl)));
    for (const p of pages) {
      await p.getByTestId("order-id").fill(orderId);
      await p.getByTestId("order-parallel").fill("1");
    }
    await Promise.all(pages.map((p) => p.getByTestId("order-submit").click()));

    const outcomes: string[] = [];
    for (const p of pages) {
      const attempt = p.getByTestId("order-attempt");
      await expect(attempt).not.toHaveAttribute("data-outcome", "pending");
      outcomes.push((await attempt.getAttribute("data-outcome")) ?? "");
    }
    expect(outcomes.filter((o) => o === "created")).toHaveLength(1);
    expect(outcomes.every((o) => ["created", "conflict", "replayed"].includes(o))).toBe(true);
    for (const p of pages) {
      await expect(p.locator(`[data-testid="order-row"][data-order="${orderId}"]`)).toHaveCount(1);
    }
    expect(errors).toEqual([]);
    await Promise.all(contexts.map((c) => c.close()));
  });

  test("a bad order id is refused in the form with the rule in words", async ({ page, stack }) => {
    await openDashboard(page, stack.webUrl);
    // The form applies the API's character rule itself: nothing is sent.
    await page.getByTestId("order-id").fill("bad id with spaces");
    await page.getByTestId("order-parallel").fill("1");
    await page.getByTestId("order-submit").click();
    await expect(page.getByTestId("order-id-error")).toContainText("no spaces");
    await expect(page.getByTestId("order-attempt")).toHaveCount(0);
  });
});
