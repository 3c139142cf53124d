import type { Locator } from "@playwright/test";
import { expect, openDashboard, test, uniqueResource } from "./fixtures";

const PHONE = { width: 390, height: 844 };

/** True when the element's text fits its box (nothing clipped or scrolled sideways). */
const fits = (el: Locator) => el.evaluate((e) => e.scrollWidth <= e.clientWidth);

test.describe("Forms read what the browser validated", () => {
  test("flash sale: 1e1 runs 10 requests, an empty field says so instead of running", async ({
    page,
    stack,
  }) => {
    await openDashboard(page, stack.webUrl);
    await page.getByTestId("burst-requests").fill("");
    await page.getByTestId("burst-start").click();
    await expect(page.getByTestId("burst-requests-error")).toHaveText("Enter a whole number from 1 to 1000.");
    await expect(page.getByTestId("burst-requests")).toHaveAttribute("aria-invalid", "true");
    await expect(page.getByTestId("burst-live")).toHaveCount(0);

    await page.getByTestId("mode-redis").click();
    await page.getByTestId("burst-requests").fill("1e1");
    await page.getByTestId("burst-start").click();
    await expect(page.getByTestId("burst-requests-error")).toHaveCount(0);
    await expect(page.getByTestId("burst-progress").getByRole("progressbar")).toHaveAttribute(
      "aria-valuemax",
      "10",
    );
    await expect(page.getByTestId("burst-verdict")).toBeVisible({ timeout: 45_000 });
  });

  test("orders: an id of spaces and a fractional count are refused with a message", async ({
    page,
    stack,
  }) => {
    await openDashboard(page, stack.webUrl);
    await page.getByTestId("order-parallel").fill("2.5");
    await expect(page.getByTestId("order-submit")).toHaveText("Submit");
    await page.getByTestId("order-parallel").fill("3");
    await expect(page.getByTestId("order-submit")).toHaveText("Submit ×3");
    await page.getByTestId("order-id").fill("   ");
    await page.getByTestId("order-submit").click();
    await expect(page.getByTestId("order-id-error")).toHaveText("Enter an order id.");
    await expect(page.getByTestId("order-attempt")).toHaveCount(0);
  });
});

test.describe("Locks at 1280×800", () => {
  test("rows show owner id and fence token, 'no expiry' is whole, the scenario table fits", async ({
    page,
    stack,
    redis,
  }) => {
    await openDashboard(page, stack.webUrl);
    const resource = uniqueResource("persist");
    await redis(`HSET lock:{${resource}} e2e-probe:00ff00ff 1`);
    const row = page.locator(
      `[data-testid="lock-table"] [data-testid="lock-row"][data-resource="${resource}"]`,
    );
    await expect(row).toBeVisible();
    // Soft: each finding is reported on its own.
    await expect.soft(row.locator(".owner-id:visible"), "owner id shown").toHaveCount(1);
    await expect
      .soft(
        row.locator('[data-testid="lock-token-inline"]:visible, [data-testid="lock-token"]:visible'),
        "fence token shown",
      )
      .toHaveCount(1);
    const ttlText = row.locator(".ly-ttl-text");
    await expect(ttlText).toHaveText("no expiry");
    expect.soft(await fits(ttlText), "'no expiry' is not clipped").toBe(true);

    const scenarioTable = page.getByTestId("scenario-locks");
    await expect(scenarioTable.locator(`[data-resource="${resource}"]`)).toBeVisible();
    expect.soft(await fits(scenarioTable), "the scenario table needs no sideways scroll").toBe(true);
    await redis(`DEL lock:{${resource}}`);
  });
});

test.describe("Phone", () => {
  test("at 390, 360 and 320 px every section link is on screen, none cut off", async ({ page, stack }) => {
    await page.setViewportSize(PHONE);
    await openDashboard(page, stack.webUrl);
    const links = page.getByRole("navigation", { name: "Sections" }).getByRole("link");
    // 360 px is a common phone width, 320 px the width WCAG's reflow criterion asks for.
    for (const width of [PHONE.width, 360, 320]) {
      await page.setViewportSize({ ...PHONE, width });
      for (const link of await links.all()) {
        const box = await link.boundingBox();
        const name = `${(await link.textContent()) ?? ""} at ${width} px`;
        expect(box, name).not.toBeNull();
        expect(box!.x, name).toBeGreaterThanOrEqual(0);
        expect(box!.x + box!.width, name).toBeLessThanOrEqual(width);
      }
    }
  });
});
