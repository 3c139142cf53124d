import type { ChildProcess } from "node:child_process";
import { freePort } from "../../../scripts/lib/ports.mjs";
import { expect, openDashboard, screenshot, test, uniqueResource } from "./fixtures";
import { startApi, startWeb, stopPid, waitForHttp } from "./harness/processes";

// Losing an instance on purpose makes Chromium log the refused connections.
test.use({
  allowedConsoleErrors: /net::ERR_|EventSource/,
});

test.describe("Connection", () => {
  test.describe.configure({ timeout: 90_000 });

  let apiC: ChildProcess | undefined;
  let web2: ChildProcess | undefined;
  test.afterAll(async () => {
    await stopPid(web2?.pid);
    await stopPid(apiC?.pid);
  });

  test("a sale through an instance whose API_URLS names a dead one counts its failed requests; when the instance in use dies, the dashboard says so and reconnects", async ({
    page,
    stack,
    redis,
  }) => {
    const portC = await freePort();
    const urlC = `http://127.0.0.1:${portC}`;
    // An instance named in api-c's API_URLS that is not running: the sale's requests sent to it fail.
    const missing = `http://127.0.0.1:${await freePort()}`;
    const webOrigins = [`http://127.0.0.1:${stack.spareWebPort}`];
    apiC = startApi({
      port: portC,
      instanceId: "api-c",
      redisUrl: stack.redisUrl,
      redlockUrls: [],
      apiUrls: [urlC, missing],
      webOrigins,
    });
    const webUrl = `http://127.0.0.1:${stack.spareWebPort}`;
    const [first, second] = [urlC, stack.apiUrls[0] as string];
    web2 = startWeb("web-failover", stack.spareWebPort, [first, second]);
    await Promise.all([waitForHttp(`${urlC}/healthz`, apiC), waitForHttp(webUrl, web2, 60_000)]);

    await openDashboard(page, webUrl);
    const conn = page.getByTestId("connection");
    await expect(conn).toContainText(`127.0.0.1:${portC}`);
    // api-c runs without Redlock nodes or PostgreSQL: those modes are offered disabled, with the reason.
    for (const [mode, reason] of [
      ["redlock", "REDLOCK_URLS is not set"],
      ["postgres", "DATABASE_URL is not set"],
    ]) {
      await expect(page.getByTestId(`mode-${mode}`)).toHaveAttribute("data-available", "false");
      await expect(page.getByTestId(`mode-${mode}-reason`)).toHaveText(`Unavailable: ${reason}`);
      await expect(page.getByTestId(`mode-${mode}`).locator("input")).toBeDisabled();
    }

    // A sale half of whose requests cannot reach an instance: the verdict on the stock is true of the requests
    // that ran, and says beside it how many never did (round robin over the two URLs: every other one).
    await page.getByTestId("mode-redis").click();
    await page.getByTestId("burst-requests").fill("20");
    await page.getByTestId("burst-stock").fill("100");
    await page.getByTestId("burst-work").fill("1");
    await page.getByTestId("burst-start").click();
    const verdict = page.getByTestId("burst-verdict");
    await expect(verdict).toBeVisible({ timeout: 45_000 });
    await expect(verdict).toHaveText(/Stock never dropped below zero/);
    await expect(page.getByTestId("burst-verdict-errors")).toHaveText(/· 10 of 20 requests failed$/);
    await expect(page.getByTestId("stat-successes")).toHaveAttribute("data-value", "10");

    await stopPid(apiC.pid, 0);
    await expect(conn).not.toHaveAttribute("data-state", "connected");
    await screenshot(page, "connection-lost", undefined);
    await expect(conn).toHaveAttribute("data-state", "connected", { timeout: 20_000 });
    await expect(conn).toContainText(second.replace("http://", ""));

    // Live data flows again through the second instance.
    const resource = uniqueResource("after-failover");
    await redis(`HSET lock:{${resource}} e2e-holder:00ff 1`);
    await redis(`PEXPIRE lock:{${resource}} 10000`);
    await expect(page.locator(`[data-testid="lock-table"] [data-resource="${resource}"]`)).toBeVisible();
    await redis(`DEL lock:{${resource}}`);
  });
});
