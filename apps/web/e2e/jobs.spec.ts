import { expect, openDashboard, screenshot, test } from "./fixtures";

test.describe("Jobs panel", () => {
  test("each tick ran once, on one of the two instances, and new ticks keep arriving", async ({
    page,
    stack,
  }) => {
    await openDashboard(page, stack.webUrl);
    const runs = page.getByTestId("job-run");
    // The stack runs the default 5 s cadence: the first run may be a tick away.
    await expect(runs.first()).toBeVisible({ timeout: 15_000 });
    const ticksNow = async () =>
      (await runs.evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.tick ?? ""))).map(Number);
    const first = Math.max(...(await ticksNow()));
    await expect
      .poll(async () => Math.max(...(await ticksNow())), { timeout: 15_000 })
      .toBeGreaterThan(first);

    const ticks = await ticksNow();
    expect(new Set(ticks).size, "no tick may run twice").toBe(ticks.length);
    const instances = await runs.evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.instance));
    for (const i of instances) expect(["api-a", "api-b"]).toContain(i);
    await expect(page.getByTestId("job-tick").first()).toBeVisible();
    await screenshot(page, "jobs-panel", "panel-jobs");
  });
});
