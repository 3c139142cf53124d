import path from "node:path";
import { expect, openDashboard, test, uniqueResource } from "./fixtures";
import { screenshotDir } from "./harness/paths";

/** Committed screenshots of every panel, phone and desktop, light and dark (the rest of e2e/screenshots is not). */
const OUT = path.join(screenshotDir, "panels");
const PANELS = ["flash-sale", "locks", "scenarios", "orders", "jobs"];
const SIZES = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;

test.describe("Screenshots", () => {
  test.describe.configure({ timeout: 180_000 });

  for (const scheme of ["light", "dark"] as const) {
    test(`every panel after a run, ${scheme}`, async ({ page, stack, redis }) => {
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
      const held = [uniqueResource("shot-a"), uniqueResource("shot-b")];
      await redis(`HSET lock:{${held[0]}} api-a:3f9c0d21aa 2`);
      await redis(`PEXPIRE lock:{${held[0]}} 240000`);
      await redis(`HSET lock:{${held[1]}} api-b:77e1b2c3dd 1`);
      await redis(`PEXPIRE lock:{${held[1]}} 120000`);
      await openDashboard(page, stack.webUrl);
      for (const [mode, work] of [
        ["none", "40"],
        ["redis", "2"],
      ] as const) {
        await page.getByTestId(`mode-${mode}`).click();
        await page.getByTestId("burst-requests").fill("60");
        await page.getByTestId("burst-stock").fill("30");
        await page.getByTestId("burst-work").fill(work);
        await page.getByTestId("burst-start").click();
        await expect(page.getByTestId("burst-start")).toHaveAttribute("aria-disabled", "false", {
          timeout: 45_000,
        });
      }
      await page.getByTestId("scenario-fast").check();
      await page.getByTestId("scenario-fencing").click();
      await expect(page.getByTestId("scenario-done")).toBeVisible({ timeout: 45_000 });
      await page.getByTestId("order-id").fill(uniqueResource("ord-shot"));
      await page.getByTestId("order-submit").click();
      await expect(page.locator('[data-testid="order-attempt"][data-outcome="pending"]')).toHaveCount(0);
      await page.mouse.move(0, 0);
      // The sticky header would be painted over every panel that needs scrolling to capture.
      await page.addStyleTag({ content: "header.top { position: static; }" });
      for (const size of SIZES) {
        await page.setViewportSize({ width: size.width, height: size.height });
        await page.waitForTimeout(300);
        for (const panel of PANELS) {
          await page.getByTestId(`panel-${panel}`).screenshot({
            path: path.join(OUT, `${panel}-${size.name}-${scheme}.png`),
            animations: "disabled",
          });
        }
        await page
          .locator("header.top")
          .screenshot({ path: path.join(OUT, `header-${size.name}-${scheme}.png`) });
      }
      for (const r of held) await redis(`DEL lock:{${r}}`);
    });
  }
});
