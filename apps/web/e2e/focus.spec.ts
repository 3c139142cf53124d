import { expect, openDashboard, test, uniqueResource } from "./fixtures";

// The order race's losers answer CONFLICT inside a 200 response; a 409 here would be a regression, but the
// other specs' allowance keeps this one about focus.
test.describe("Focus stays on what you pressed", () => {
  test.describe.configure({ timeout: 120_000 });

  test("Start: focus stays on the busy button through the run and after the verdict", async ({
    page,
    stack,
  }) => {
    await openDashboard(page, stack.webUrl);
    await page.getByTestId("mode-redis").click();
    await page.getByTestId("burst-requests").fill("80");
    await page.getByTestId("burst-stock").fill("40");
    await page.getByTestId("burst-work").fill("5");
    await page.getByTestId("burst-work").press("Tab");
    const start = page.getByTestId("burst-start");
    await expect(start).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(start).toHaveAttribute("aria-disabled", "true");
    await expect(start).toBeFocused();
    await expect(page.getByTestId("burst-verdict")).toBeVisible({ timeout: 45_000 });
    await expect(start).toHaveAttribute("aria-disabled", "false");
    await expect(start).toBeFocused();
    // The verdict is announced by a live region that was there before the run.
    await expect(page.getByTestId("burst-status")).toHaveAttribute("role", "status");
    await expect(page.getByTestId("burst-status")).toContainText("Stock never dropped below zero");
  });

  test("a scenario button keeps focus while its scenario runs and after", async ({ page, stack }) => {
    await openDashboard(page, stack.webUrl);
    await page.getByTestId("scenario-fast").check();
    const button = page.getByTestId("scenario-reentrancy");
    await button.focus();
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("scenario-status")).toHaveAttribute("data-status", "running");
    await expect(button).toHaveAttribute("aria-disabled", "true");
    await expect(button).toBeFocused();
    await expect(page.getByTestId("scenario-done")).toBeVisible({ timeout: 45_000 });
    await expect(button).toBeFocused();
    await expect(page.getByTestId("scenario-result")).toHaveAttribute("role", "status");
  });

  test("Submit keeps focus while the clients race, and the result is announced", async ({ page, stack }) => {
    await openDashboard(page, stack.webUrl);
    await page.getByTestId("order-id").fill(uniqueResource("ord-focus"));
    await page.getByTestId("order-parallel").fill("5");
    const submit = page.getByTestId("order-submit");
    await submit.focus();
    await page.keyboard.press("Enter");
    await expect(page.locator('[data-testid="order-attempt"][data-outcome="pending"]')).toHaveCount(0);
    await expect(submit).toBeFocused();
    await expect(page.getByTestId("order-status")).toHaveAttribute("role", "status");
    await expect(page.getByTestId("order-status")).toContainText("Exactly one client created the order.");
  });
});
