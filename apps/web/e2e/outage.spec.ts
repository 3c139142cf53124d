import type { ChildProcess } from "node:child_process";
import type { Page } from "@playwright/test";
import { freePort } from "../../../scripts/lib/ports.mjs";
import { expect, screenshot, test, uniqueResource } from "./fixtures";
import { startApi, startWeb, stopPid, waitForHttp } from "./harness/processes";

/** Every alert on the page but Next.js's route announcer (always present, empty). */
const alerts = (page: Page) => page.locator('[role="alert"]:not(#__next-route-announcer__)');

// Instances die on purpose: Chromium logs the refused connections.
test.use({ allowedConsoleErrors: /net::ERR_|EventSource|Failed to load resource/ });

test.describe("Outages", () => {
  test.describe.configure({ timeout: 150_000 });

  const apis = new Map<string, ChildProcess>();
  let web: ChildProcess | undefined;
  test.afterAll(async () => {
    await stopPid(web?.pid);
    for (const child of apis.values()) await stopPid(child.pid);
  });

  test("one API down: failover said in words; both down: Offline once, Start blocked; back: all clear", async ({
    page,
    stack,
    redis,
  }) => {
    const ports = [await freePort(), await freePort()] as const;
    const urls = ports.map((p) => `http://127.0.0.1:${p}`);
    const webUrl = `http://127.0.0.1:${stack.spareWebPort}`;
    const start = async (i: 0 | 1) => {
      const child = startApi({
        port: ports[i],
        instanceId: `api-o${i + 1}`,
        redisUrl: stack.redisUrl,
        redlockUrls: [],
        apiUrls: urls,
        webOrigins: [webUrl],
      });
      apis.set(`api-o${i + 1}`, child);
      await waitForHttp(`${urls[i]}/healthz`, child);
    };
    const kill = async (i: 0 | 1) => {
      const child = apis.get(`api-o${i + 1}`);
      apis.delete(`api-o${i + 1}`);
      await stopPid(child?.pid, 0);
    };
    await Promise.all([start(0), start(1)]);
    web = startWeb("web-outage", stack.spareWebPort, urls);
    await waitForHttp(webUrl, web, 60_000);

    const conn = page.getByTestId("connection");
    await page.goto(webUrl);
    // Never "Reconnecting…" before the first connection.
    await expect(conn).toHaveAttribute("data-state", /connecting|connected/);
    await expect(conn).not.toHaveAttribute("data-state", "reconnecting");
    await expect(conn).toHaveAttribute("data-state", "connected");
    await expect(page.getByTestId("connection-state")).toHaveText("Live");
    await expect(conn).toContainText(`127.0.0.1:${ports[0]}`);
    const resource = uniqueResource("outage");
    await redis(`HSET lock:{${resource}} e2e-outage:00ff 1`);
    await redis(`PEXPIRE lock:{${resource}} 60000`);
    await expect(page.locator(`[data-testid="lock-table"] [data-resource="${resource}"]`)).toBeVisible();

    // One API down: the page moves to the other and says so; the host label follows the stream.
    await kill(0);
    await expect(page.getByTestId("connection-note")).toHaveText("api-o1 unreachable, using api-o2", {
      timeout: 20_000,
    });
    await expect(conn).toHaveAttribute("data-state", "connected");
    await expect(conn).toContainText(`127.0.0.1:${ports[1]}`);
    await expect(page.getByTestId("connection-state")).toContainText("api-o1 unreachable, using api-o2");

    // Order submits fail over like queries: every client reaches api-o2, exactly one creates the order.
    await page.getByTestId("order-id").fill(uniqueResource("ord-failover"));
    await page.getByTestId("order-parallel").fill("5");
    await page.getByTestId("order-submit").click();
    await expect(page.locator('[data-testid="order-attempt"][data-outcome="pending"]')).toHaveCount(0);
    await expect(page.locator('[data-testid="order-attempt"][data-outcome="error"]')).toHaveCount(0);
    await expect(page.locator('[data-testid="order-attempt"][data-outcome="created"]')).toHaveCount(1);
    await expect(page.getByTestId("order-summary")).toHaveAttribute("data-created", "1");

    // api-o1 back: the failover note is over (the stream may stay on api-o2).
    await start(0);
    await expect(page.getByTestId("connection-note")).toHaveCount(0, { timeout: 15_000 });
    await expect(page.getByTestId("connection-state")).toHaveText("Live");

    // Both down: "Offline", once, in one place; Start blocked with the reason; the lock panel dimmed.
    await kill(0);
    await kill(1);
    await expect(conn).toHaveAttribute("data-state", "offline", { timeout: 30_000 });
    await expect(page.getByTestId("connection-state")).toHaveText("Offline");
    await expect(page.getByText("Offline", { exact: true })).toHaveCount(1);
    // Let the polling queries fail a few times: their errors must not flicker in every panel.
    for (let i = 0; i < 6; i++) {
      await expect(alerts(page)).toHaveCount(0);
      await page.waitForTimeout(500);
    }
    const startButton = page.getByTestId("burst-start");
    await expect(startButton).toHaveAttribute("aria-disabled", "true");
    await expect(page.getByTestId("burst-blocked")).toContainText("unreachable");
    await expect(startButton).toHaveAccessibleDescription(/unreachable/);
    const scenarioButton = page.getByTestId("scenario-crash");
    await expect(scenarioButton).toHaveAttribute("aria-disabled", "true");
    await expect(scenarioButton).toHaveAccessibleDescription(/unreachable/);
    await scenarioButton.click({ force: true });
    await expect(page.getByTestId("scenario-status")).not.toHaveAttribute("data-status", "running");
    await expect(page.getByTestId("panel-locks")).toHaveClass(/stale/);
    await expect(page.getByTestId("lock-count")).toContainText("last known");
    await screenshot(page, "outage-offline-1280");

    // Back: everything clears without a reload.
    await Promise.all([start(0), start(1)]);
    await expect(conn).toHaveAttribute("data-state", "connected", { timeout: 30_000 });
    await expect(page.getByTestId("connection-state")).toContainText("Live");
    await expect(startButton).toHaveAttribute("aria-disabled", "false");
    await expect(page.getByTestId("burst-blocked")).toHaveCount(0);
    await expect(page.getByTestId("panel-locks")).not.toHaveClass(/stale/);
    await expect(alerts(page)).toHaveCount(0, { timeout: 15_000 });
    await expect(page.locator(`[data-testid="lock-table"] [data-resource="${resource}"]`)).toBeVisible();
    await redis(`DEL lock:{${resource}}`);
  });
});
