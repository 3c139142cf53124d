import { expect, openDashboard, screenshot, test } from "./fixtures";

test.describe("Scenarios panel", () => {
  test.describe.configure({ timeout: 90_000 });

  test("watchdog: the timeline shows renewals and the live lock's bar jumps back", async ({
    page,
    stack,
  }) => {
    await openDashboard(page, stack.webUrl);
    await page.getByTestId("scenario-fast").check();
    await page.getByTestId("scenario-watchdog").click();
    await expect(page.getByTestId("scenario-status")).toHaveAttribute("data-status", "running");
    const lockRow = page.locator('[data-testid="scenario-locks"] [data-testid="lock-row"]');
    await expect(lockRow.first()).toBeVisible();
    await expect(lockRow.first()).toHaveAttribute("data-resource", /^demo:watchdog:/);
    // A renewal seen in the live table: the bar got more time than its countdown predicted.
    await expect(
      page
        .locator('[data-testid="scenario-locks"] [data-testid="lock-ttl"]:not([data-renewals="0"])')
        .first(),
    ).toBeAttached();
    await expect(page.locator('[data-testid="scenario-step"][data-kind="renewed"]').first()).toBeVisible();
    await screenshot(page, "scenarios-watchdog", "panel-scenarios");
    await expect(page.getByTestId("scenario-done")).toHaveAttribute("data-ok", "true", { timeout: 30_000 });
    await expect(page.locator('[data-testid="scenario-step"][data-kind="released"]')).toHaveCount(1);
  });

  for (const name of ["reentrancy", "misdelete", "fencing", "crash"] as const) {
    test(`${name}: the timeline runs to its expected ending`, async ({ page, stack }) => {
      await openDashboard(page, stack.webUrl);
      await page.getByTestId("scenario-fast").check();
      await page.getByTestId(`scenario-${name}`).click();
      await expect(page.getByTestId("scenario-done")).toHaveAttribute("data-ok", "true", { timeout: 45_000 });
      expect(await page.getByTestId("scenario-step").count()).toBeGreaterThan(2);
      await expect(page.locator('[data-testid="scenario-step"][data-kind="error"]')).toHaveCount(0);
      await screenshot(page, `scenarios-${name}`, "panel-scenarios");
    });
  }
});
