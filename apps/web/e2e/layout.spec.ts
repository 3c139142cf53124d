import { expect, openDashboard, screenshot, test } from "./fixtures";

const PANELS = ["panel-flash-sale", "panel-locks", "panel-orders", "panel-scenarios", "panel-jobs"];

test.describe("Layout", () => {
  test("at 1280×800 every panel renders, nothing overflows sideways, and the console stays clean", async ({
    page,
    stack,
    consoleErrors,
  }) => {
    await openDashboard(page, stack.webUrl);
    for (const id of PANELS) await expect(page.getByTestId(id)).toBeVisible();
    await expect(page.getByTestId("system-info")).toContainText("Redis");
    // Let the live stream and the polling queries run for a moment before judging the console.
    await page.waitForTimeout(1500);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, "dashboard-1280-full");
    expect(consoleErrors).toEqual([]);
  });

  test("on a phone the panels stack and stay usable", async ({ page, stack }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await openDashboard(page, stack.webUrl);
    for (const id of PANELS) await expect(page.getByTestId(id)).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const [flash, locks] = await Promise.all(
      ["panel-flash-sale", "panel-locks"].map((id) => page.getByTestId(id).boundingBox()),
    );
    expect(locks!.y).toBeGreaterThan(flash!.y + flash!.height - 1);
    await page.getByTestId("burst-start").scrollIntoViewIfNeeded();
    await expect(page.getByTestId("burst-start")).toBeInViewport();
    await screenshot(page, "dashboard-phone");
  });

  test("the dark scheme follows the system setting", async ({ page, stack }) => {
    await page.emulateMedia({ colorScheme: "dark" });
    await openDashboard(page, stack.webUrl);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe("rgb(15, 18, 23)");
    await screenshot(page, "dashboard-dark");
  });
});
