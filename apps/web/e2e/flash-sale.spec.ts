import type { Page } from "@playwright/test";
import { collectConsoleErrors, expect, openDashboard, screenshot, test } from "./fixtures";

async function runBurst(
  page: Page,
  mode: string,
  opts: { requests?: number; workMs?: number; stock?: number } = {},
) {
  await page.getByTestId(`mode-${mode}`).click();
  await page.getByTestId("burst-requests").fill(String(opts.requests ?? 200));
  await page.getByTestId("burst-stock").fill(String(opts.stock ?? 100));
  await page.getByTestId("burst-work").fill(String(opts.workMs ?? 10));
  await page.getByTestId("burst-start").click();
  await expect(page.getByTestId("burst-start")).toBeDisabled();
  const verdict = page.getByTestId("burst-verdict");
  await expect(verdict).toBeVisible({ timeout: 45_000 });
  await expect(verdict).toContainText(`mode ${mode}`);
  return verdict;
}

test.describe("Flash sale panel", () => {
  test.describe.configure({ timeout: 120_000 });

  test("mode redis: 200 buyers, 100 in stock → never below zero, final stock 0, 100 sold", async ({
    page,
    stack,
  }) => {
    await openDashboard(page, stack.webUrl);
    const verdict = await runBurst(page, "redis");
    await expect(verdict).toHaveText(/Stock never dropped below zero/);
    await expect(verdict).toHaveAttribute("data-safe", "true");
    await expect(page.getByTestId("stat-successes")).toHaveAttribute("data-value", "100");
    await expect(page.getByTestId("stat-final-stock")).toHaveAttribute("data-value", "0");
    await expect(page.getByTestId("stat-oversold")).toHaveAttribute("data-value", "0");
    await expect(page.getByTestId("stat-sold-out")).toHaveAttribute("data-value", "100");
    await expect(page.getByTestId("burst-progress")).toContainText("200 / 200");
    // Both instances served requests, and the chart drew the stock as it fell.
    await expect(page.getByTestId("report-instances")).toContainText("api-a");
    await expect(page.getByTestId("report-instances")).toContainText("api-b");
    expect(Number(await page.getByTestId("stock-chart").getAttribute("data-points"))).toBeGreaterThan(2);
    await expect(page.getByTestId("history-row")).toHaveCount(1);
    // The APIs export traces (the stack's stand-in collector): the sale is one trace, named in the report, that
    // holds the burst, its 200 requests on both instances and every request's lock spans.
    await expect(page.getByTestId("report-trace")).toBeVisible();
    const traceId = (await page.getByTestId("report-trace").locator("code").textContent()) ?? "";
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    await expect
      .poll(async () => (await fetch(`${stack.otlpUrl}/traces/${traceId}`)).json(), { timeout: 15_000 })
      .toMatchObject({
        "demo.burst": 1,
        "POST /trpc/stock.deduct": 200,
        "lock.acquire": 200,
        "lock.hold": 200,
      });
    await screenshot(page, "flash-sale-redis", "panel-flash-sale");
  });

  test("mode none with slow work oversells and the verdict says by how much", async ({ page, stack }) => {
    await openDashboard(page, stack.webUrl);
    const verdict = await runBurst(page, "none", { workMs: 200 });
    await expect(verdict).toHaveAttribute("data-safe", "false");
    await expect(verdict).toHaveText(/Oversold by \d+ \(lowest stock −\d+\)/);
    const oversold = Number(await verdict.getAttribute("data-oversold"));
    const lowest = Number(await verdict.getAttribute("data-lowest"));
    expect(oversold).toBeGreaterThan(0);
    expect(lowest).toBeLessThan(0);
    await expect(page.getByTestId("stat-oversold")).toHaveAttribute("data-value", String(oversold));
    await screenshot(page, "flash-sale-none", "panel-flash-sale");
  });

  test("every mode, compared side by side: only the unsafe ones oversell", async ({ page, stack }) => {
    await openDashboard(page, stack.webUrl);
    // The stack gives both APIs three Redlock nodes and a PostgreSQL: every mode must be offered.
    await expect(page.getByTestId("system-info")).toBeVisible();
    for (const mode of ["redlock", "postgres"]) {
      await expect(page.getByTestId(`mode-${mode}`), mode).toHaveAttribute("data-available", "true");
      await expect(page.getByTestId(`mode-${mode}-reason`)).toHaveCount(0);
    }
    await expect(page.getByTestId("mode-postgres")).toContainText("LISTEN/NOTIFY");
    const safe = ["redis", "redlock", "postgres", "atomic"];
    const unsafe = ["none", "local"];
    for (const mode of safe) {
      const verdict = await runBurst(page, mode, { workMs: 5 });
      await expect(verdict, mode).toHaveAttribute("data-safe", "true");
      await expect(verdict).toHaveText(/Stock never dropped below zero/);
      await expect(page.getByTestId("stat-successes")).toHaveAttribute("data-value", "100");
      await expect(page.getByTestId("stat-final-stock")).toHaveAttribute("data-value", "0");
    }
    for (const mode of unsafe) {
      const verdict = await runBurst(page, mode, { workMs: 100 });
      await expect(verdict, mode).toHaveAttribute("data-safe", "false");
      await expect(verdict).toHaveText(/Oversold by \d+/);
    }
    await expect(page.getByTestId("history-row")).toHaveCount(safe.length + unsafe.length);
    for (const mode of [...safe, ...unsafe]) {
      await expect(page.locator(`[data-testid="history-row"][data-mode="${mode}"]`)).toHaveCount(1);
    }
    await screenshot(page, "flash-sale-history", "panel-flash-sale");
  });

  test("two dashboards start a sale at once: one runs, the other is told why in words", async ({
    browser,
    stack,
  }) => {
    const contexts = await Promise.all([browser.newContext(), browser.newContext()]);
    const pages = await Promise.all(contexts.map((c) => c.newPage()));
    const errors: string[] = [];
    for (const p of pages) collectConsoleErrors(p, errors);
    await Promise.all(pages.map((p) => openDashboard(p, stack.webUrl)));
    for (const p of pages) {
      await p.getByTestId("mode-redis").click();
      await p.getByTestId("burst-work").fill("20");
    }
    await Promise.all(pages.map((p) => p.getByTestId("burst-start").click()));
    const outcome = async (p: (typeof pages)[number]) => {
      await expect(p.getByTestId("burst-verdict").or(p.getByTestId("burst-error"))).toBeVisible({
        timeout: 45_000,
      });
      return (await p.getByTestId("burst-error").count()) > 0 ? "error" : "verdict";
    };
    const outcomes = await Promise.all(pages.map(outcome));
    expect([...outcomes].sort()).toEqual(["error", "verdict"]);
    const loser = pages[outcomes.indexOf("error")]!;
    // One burst at a time across instances, CONFLICT naming the running run: the dashboard shows the code and
    // a sentence.
    const error = loser.getByTestId("burst-error");
    await expect(error).toHaveAttribute("data-code", /^(CONFLICT|TOO_MANY_REQUESTS)$/);
    await expect(error).toContainText(/Busy|Too many requests/);
    await expect(loser.getByTestId("burst-start")).toBeEnabled();
    // Starting is a mutation now: the refused one is an HTTP 409, which the browser logs by itself.
    expect(errors.filter((e) => !/status of 409 \(Conflict\)/.test(e))).toEqual([]);
    await Promise.all(contexts.map((c) => c.close()));
  });
});
