import { collectConsoleErrors, expect, openDashboard, screenshot, test, uniqueResource } from "./fixtures";

const OWNER = "e2e-holder:0123456789abcdef0123456789abcdef";

test.describe("Locks panel", () => {
  test("a lock taken outside the dashboard appears with owner, count and a falling TTL, then disappears", async ({
    page,
    stack,
    redis,
  }) => {
    await openDashboard(page, stack.webUrl);
    const resource = uniqueResource("held");
    const key = `lock:{${resource}}`;
    await redis(`HSET ${key} ${OWNER} 1`);
    await redis(`PEXPIRE ${key} 20000`);

    const row = page.locator(
      `[data-testid="lock-table"] [data-testid="lock-row"][data-resource="${resource}"]`,
    );
    await expect(row).toBeVisible();
    await expect(row, "a new row is highlighted").toHaveAttribute("data-phase", "new");
    await expect(row.getByTestId("lock-owner")).toHaveAttribute("data-owner", OWNER);
    await expect(row.getByTestId("lock-owner")).toHaveAttribute("data-count", "1");
    await expect(row.getByTestId("lock-instance")).toHaveText("e2e-holder");

    const ttl = row.getByTestId("lock-ttl");
    await expect(ttl).toHaveAttribute("data-remaining-ms", /^\d+$/);
    const first = Number(await ttl.getAttribute("data-remaining-ms"));
    expect(first).toBeGreaterThan(15_000);
    expect(first).toBeLessThanOrEqual(20_000);
    // The countdown is written when its shown second changes (once a second above 10 s): wait for two steps.
    await page.waitForTimeout(2_200);
    const second = Number(await ttl.getAttribute("data-remaining-ms"));
    expect(second).toBeLessThan(first - 500);

    // Re-entry raises the count; a PEXPIRE back to 20 s is a renewal: the bar jumps back.
    await redis(`HINCRBY ${key} ${OWNER} 1`);
    await redis(`PEXPIRE ${key} 20000`);
    await expect(row.getByTestId("lock-owner")).toHaveAttribute("data-count", "2");
    await expect(ttl).not.toHaveAttribute("data-renewals", "0");
    await expect
      .poll(async () => Number(await ttl.getAttribute("data-remaining-ms")), {
        message: "the bar jumps back",
      })
      .toBeGreaterThan(second);
    await screenshot(page, "locks-panel", "panel-locks");

    await redis(`DEL ${key}`);
    await expect(row, "a released row lingers, marked, before it goes").toHaveAttribute("data-phase", "gone");
    await expect(row).toHaveCount(0);
  });

  test("the filter narrows the table and says when nothing matches", async ({ page, stack, redis }) => {
    await openDashboard(page, stack.webUrl);
    const a = uniqueResource("filter-a");
    const b = uniqueResource("filter-b");
    for (const r of [a, b]) {
      await redis(`HSET lock:{${r}} ${OWNER} 1`);
      await redis(`PEXPIRE lock:{${r}} 15000`);
    }
    const table = page.getByTestId("lock-table");
    await expect(table.locator(`[data-resource="${a}"]`)).toBeVisible();
    await expect(table.locator(`[data-resource="${b}"]`)).toBeVisible();

    await page.getByTestId("lock-filter").fill(a);
    await expect(table.locator(`[data-resource="${b}"]`)).toHaveCount(0);
    await expect(table.locator(`[data-resource="${a}"]`)).toBeVisible();

    await page.getByTestId("lock-filter").fill("no-such-resource-anywhere");
    await expect(table).toContainText("No lock matches");
    for (const r of [a, b]) await redis(`DEL lock:{${r}}`);
  });

  test("two dashboards open at once see the same live locks", async ({ browser, stack, redis }) => {
    const contexts = await Promise.all([browser.newContext(), browser.newContext()]);
    const pages = await Promise.all(contexts.map((c) => c.newPage()));
    const errors: string[] = [];
    for (const p of pages) collectConsoleErrors(p, errors);
    await Promise.all(pages.map((p) => openDashboard(p, stack.webUrl)));
    const resources = [uniqueResource("shared-1"), uniqueResource("shared-2")];
    for (const r of resources) {
      await redis(`HSET lock:{${r}} ${OWNER} 1`);
      await redis(`PEXPIRE lock:{${r}} 15000`);
    }
    for (const p of pages) {
      for (const r of resources) {
        await expect(p.locator(`[data-testid="lock-table"] [data-resource="${r}"]`)).toBeVisible();
      }
    }
    await redis(`DEL lock:{${resources[0]}}`);
    for (const p of pages) {
      await expect(p.locator(`[data-testid="lock-table"] [data-resource="${resources[0]}"]`)).toHaveCount(0);
      await expect(p.locator(`[data-testid="lock-table"] [data-resource="${resources[1]}"]`)).toBeVisible();
    }
    await redis(`DEL lock:{${resources[1]}}`);
    expect(errors).toEqual([]);
    await Promise.all(contexts.map((c) => c.close()));
  });
});
