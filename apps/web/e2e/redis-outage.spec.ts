import type { ChildProcess } from "node:child_process";
import { freePort } from "../../../scripts/lib/ports.mjs";
import { rawCommand, startRedis } from "../../../scripts/lib/redis.mjs";
import { expect, test, uniqueResource } from "./fixtures";
import { startApi, startWeb, stopPid, waitForHttp } from "./harness/processes";

// With Redis gone the API answers its queries with 503s, which Chromium logs.
test.use({ allowedConsoleErrors: /Failed to load resource|net::ERR_|EventSource/ });

/** system.info is polled every 15 s while Redis answers: allow one period and the slow INFO that fails. */
const NOTICE_MS = 40_000;

test.describe("Redis outage", () => {
  test.describe.configure({ timeout: 120_000 });

  let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
  let api: ChildProcess | undefined;
  let web: ChildProcess | undefined;
  test.afterAll(async () => {
    await stopPid(web?.pid);
    await stopPid(api?.pid);
    await redis?.stop();
  });

  test("API up, Redis down: the header says so and the locks are marked last known, then all clear", async ({
    page,
    stack,
  }) => {
    redis = await startRedis();
    const apiUrl = `http://127.0.0.1:${await freePort()}`;
    const webUrl = `http://127.0.0.1:${stack.spareWebPort}`;
    api = startApi({
      port: Number(new URL(apiUrl).port),
      instanceId: "api-r1",
      redisUrl: redis.url,
      redlockUrls: [],
      apiUrls: [apiUrl],
      webOrigins: [webUrl],
    });
    await waitForHttp(`${apiUrl}/healthz`, api);
    web = startWeb("web-redis-outage", stack.spareWebPort, [apiUrl]);
    await waitForHttp(webUrl, web, 60_000);

    await page.goto(webUrl);
    const state = page.getByTestId("connection-state");
    await expect(state).toHaveText("Live");
    const resource = uniqueResource("redis-outage");
    await rawCommand(redis.port, `HSET lock:{${resource}} e2e-outage:00ff 1`);
    await rawCommand(redis.port, `PEXPIRE lock:{${resource}} 60000`);
    await expect(page.locator(`[data-testid="lock-table"] [data-resource="${resource}"]`)).toBeVisible();

    redis.kill();
    await expect(state).toContainText("API up, Redis unreachable", { timeout: NOTICE_MS });
    await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "degraded");
    await expect(page.getByTestId("connection-note")).toContainText("cannot reach Redis");
    await expect(page.getByTestId("system-info")).toContainText("Redis unreachable");
    await expect(page.getByTestId("panel-locks")).toHaveClass(/stale/);
    await expect(page.getByTestId("lock-count")).toContainText("last known");

    await redis.restart();
    await expect(state).toHaveText("Live", { timeout: NOTICE_MS });
    await expect(page.getByTestId("panel-locks")).not.toHaveClass(/stale/);
    await expect(page.getByTestId("system-info")).toContainText(/Redis \d+\.\d+/);
  });
});
