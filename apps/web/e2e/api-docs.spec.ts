import { collectConsoleErrors, expect, openDashboard, test } from "./fixtures";

test.describe("REST API docs", () => {
  test("the header links Swagger UI on the API; it renders the seed's routes and runs one, console clean", async ({
    page,
    context,
    stack,
  }) => {
    await openDashboard(page, stack.webUrl);
    const link = page.getByTestId("api-docs-link");
    await expect(link).toHaveAttribute("href", `${stack.apiUrls[0]}/api/docs`);

    // Collect the docs tab's console from its first line: it opens in a new tab.
    const errors: string[] = [];
    context.on("page", (p) => collectConsoleErrors(p, errors));
    const [docs] = await Promise.all([context.waitForEvent("page"), link.click()]);
    await docs.waitForLoadState();
    expect(docs.url()).toBe(`${stack.apiUrls[0]}/api/docs`);

    // Every route of the document, rendered from /api/openapi.json (linked from the page, fetched locally).
    for (const [method, path] of [
      ["post", "/api/stock/deduct"],
      ["get", "/api/stock/status"],
      ["post", "/api/stock/reset"],
      ["post", "/api/order/submit"],
      ["get", "/api/order/status"],
    ]) {
      await expect(docs.locator(`.opblock-${method} [data-path="${path}"]`)).toBeVisible();
    }
    await expect(docs.locator('a[href="/api/openapi.json"]')).toBeVisible();

    // Try it out: GET /api/stock/status from the page, answered by the API with the seed's shape. The default
    // product must exist (a product never reset is a 404, as deduct answers it): the seed kept its 100 in memory.
    const reset = await fetch(`${stack.apiUrls[0]}/api/stock/reset?productId=1001&stock=100`, {
      method: "POST",
    });
    expect(reset.status).toBe(200);
    const status = docs.locator("#operations-seed-stock-status");
    await status.locator(".opblock-summary").click();
    await status.getByRole("button", { name: "Try it out" }).click();
    await status.getByRole("button", { name: "Execute" }).click();
    const live = status.locator(".live-responses-table tr.response");
    await expect(live.locator(".response-col_status")).toHaveText("200");
    await expect(live.locator(".response-col_description")).toContainText('"stock"');

    // Nothing came from anywhere but the API itself.
    const requested: string[] = [];
    docs.on("request", (r) => requested.push(r.url()));
    await docs.reload();
    await expect(docs.locator('.opblock-post [data-path="/api/stock/deduct"]')).toBeVisible();
    const elsewhere = requested.filter(
      (u) => !u.startsWith(`${stack.apiUrls[0]}/`) && !u.startsWith("data:"),
    );
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
  });
});
