import { expect, openDashboard, test } from "./fixtures";

const WIDTHS = [390, 768, 1280, 1920];

test.describe("What matters is on screen", () => {
  test.describe.configure({ timeout: 120_000 });

  test("the verdict of past runs is visible without scrolling sideways at 390, 768, 1280 and 1920 px", async ({
    page,
    stack,
  }) => {
    await openDashboard(page, stack.webUrl);
    await page.getByTestId("mode-none").click();
    await page.getByTestId("burst-requests").fill("40");
    await page.getByTestId("burst-stock").fill("10");
    await page.getByTestId("burst-work").fill("30");
    await page.getByTestId("burst-start").click();
    await expect(page.getByTestId("history-row")).toHaveCount(1, { timeout: 45_000 });
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      const badge = page.getByTestId("history-row").first().getByTestId("history-verdict");
      await badge.scrollIntoViewIfNeeded();
      const box = await badge.evaluate((el) => {
        const r = el.getBoundingClientRect();
        const wrap = el.closest(".ly-table-wrap") as HTMLElement;
        const w = wrap.getBoundingClientRect();
        return {
          left: r.left,
          right: r.right,
          wrapRight: w.right,
          scrollLeft: wrap.scrollLeft,
          viewport: window.innerWidth,
          pageOverflow: document.documentElement.scrollWidth - window.innerWidth,
        };
      });
      expect(box.left, `${width}px`).toBeGreaterThanOrEqual(0);
      expect(box.right, `${width}px: inside the table's visible area`).toBeLessThanOrEqual(box.wrapRight);
      expect(box.right, `${width}px: inside the viewport`).toBeLessThanOrEqual(box.viewport);
      expect(box.scrollLeft).toBe(0);
      expect(box.pageOverflow, `${width}px: no sideways scrolling of the page`).toBeLessThanOrEqual(0);
      await expect(page.getByTestId("burst-verdict")).toBeVisible();
    }
  });

  test("at 390 px the sticky header never covers the focused control, and the lock TTL column is on screen", async ({
    page,
    stack,
    redis,
  }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    // Instant scrolling, so positions are read after the scroll and not during a smooth one.
    await page.emulateMedia({ reducedMotion: "reduce" });
    const resource = `e2e-narrow-${Date.now().toString(36)}`;
    await redis(`HSET lock:{${resource}} e2e-narrow:00ff 1`);
    await redis(`PEXPIRE lock:{${resource}} 30000`);
    await openDashboard(page, stack.webUrl);
    const header = await page.locator("header.top").boundingBox();
    expect(header!.height, "a short header on phones").toBeLessThanOrEqual(84);
    for (const id of ["burst-start", "burst-work", "scenario-watchdog", "order-submit"]) {
      // Focus from further down the page, as Shift+Tab does: the control must land below the header.
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      await page.getByTestId(id).focus();
      const top = await page.getByTestId(id).evaluate((el) => el.getBoundingClientRect().top);
      const headerBottom = await page
        .locator("header.top")
        .evaluate((el) => el.getBoundingClientRect().bottom);
      expect(top, id).toBeGreaterThanOrEqual(headerBottom);
    }
    for (const table of ["lock-table", "scenario-locks"]) {
      const ttl = page.locator(
        `[data-testid="${table}"] [data-resource="${resource}"] [data-testid="lock-ttl"]`,
      );
      // Scrolled to vertically only: the table itself stays at its left edge.
      const right = await ttl.evaluate((el) => {
        (el.closest(".ly-table-wrap") as HTMLElement).scrollLeft = 0;
        window.scrollTo(0, window.scrollY + el.getBoundingClientRect().top - 300);
        return el.getBoundingClientRect().right;
      });
      expect(right, table).toBeLessThanOrEqual(390);
    }
    await redis(`DEL lock:{${resource}}`);
  });
});
