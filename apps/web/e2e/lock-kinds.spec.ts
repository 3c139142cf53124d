import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, openDashboard, screenshot, test, uniqueResource } from "./fixtures";

const A = "e2e-kinds-a:0123456789abcdef0123456789abcdef";
const B = "e2e-kinds-b:fedcba9876543210fedcba9876543210";

/** A semaphore or read-write holder field as the library writes it: reads|writes|expiresAtMs|token. */
const holder = (reads: number, writes: number, leaseMs: number, token: number) =>
  `${reads}|${writes}|${Date.now() + leaseMs}|${token}`;

const row = (page: Page, resource: string) =>
  page.locator(`[data-testid="lock-table"] [data-testid="lock-row"][data-resource="${resource}"]`);

async function seriousViolations(page: Page, panel: string) {
  const result = await new AxeBuilder({ page })
    .include(`[data-testid="${panel}"]`)
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"])
    .analyze();
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

test.describe("Lock kinds", () => {
  test.describe.configure({ timeout: 90_000 });

  test("the lock table tells a mutex, a semaphore and a read-write lock apart, in text", async ({
    page,
    stack,
    redis,
  }) => {
    await openDashboard(page, stack.webUrl);
    const [mutex, sem, readers, writer] = ["mutex", "sem", "readers", "writer"].map(uniqueResource) as [
      string,
      string,
      string,
      string,
    ];
    await redis(`HSET lock:{${mutex}} ${A} 1`);
    await redis(`PEXPIRE lock:{${mutex}} 30000`);
    // Two permits of three; the first holder's own lease ends in 4 s, while the key lives on for the other.
    await redis(
      `HSET lock:semaphore:{${sem}} ${A} ${holder(1, 0, 4_000, 11)} ${B} ${holder(2, 0, 30_000, 12)} ~permits 3`,
    );
    await redis(`PEXPIRE lock:semaphore:{${sem}} 30000`);
    // Two readers, and a writer's mark: a writer waits for them.
    await redis(
      `HSET lock:rw:{${readers}} ${A} ${holder(1, 0, 30_000, 21)} ${B} ${holder(1, 0, 30_000, 22)} ~writer-waits ${Date.now() + 30_000} ~waiters 1`,
    );
    await redis(`PEXPIRE lock:rw:{${readers}} 30000`);
    await redis(`HSET lock:rw:{${writer}} ${A} ${holder(0, 1, 30_000, 31)}`);
    await redis(`PEXPIRE lock:rw:{${writer}} 30000`);
    // The kinds' fence counters match lock:* too: never a row.
    await redis(`SET lock:rw:fence:{${writer}} 31 PX 30000`);
    await redis(`SET lock:semaphore:fence:{${sem}} 12 PX 30000`);

    await expect(row(page, mutex)).toHaveAttribute("data-kind", "mutex");
    await expect(row(page, mutex).getByTestId("lock-kind")).toContainText("mutex");
    await expect(row(page, mutex).getByTestId("lock-kind-summary")).toHaveCount(0);

    const s = row(page, sem);
    await expect(s).toHaveAttribute("data-kind", "semaphore");
    await expect(s.getByTestId("lock-kind")).toContainText("semaphore");
    await expect(s.getByTestId("lock-kind-summary")).toHaveText("2 / 3 permits");
    await expect(s.getByTestId("lock-owner-mode")).toHaveText(["permit", "permit"]);

    const r = row(page, readers);
    await expect(r).toHaveAttribute("data-kind", "read-write");
    await expect(r.getByTestId("lock-kind-summary")).toHaveText("2 readers");
    await expect(r.getByTestId("lock-writer-waiting")).toHaveText("writer waiting");
    await expect(r.getByTestId("lock-owner-mode")).toHaveText(["read", "read"]);

    const w = row(page, writer);
    await expect(w.getByTestId("lock-kind-summary")).toHaveText("writer");
    await expect(w.getByTestId("lock-writer-waiting")).toHaveCount(0);
    await expect(w.getByTestId("lock-owner-mode")).toHaveText(["write"]);
    await expect(w.getByTestId("lock-token")).toHaveText("31");
    // One row each: their fence counters (same resource, another key) are not locks.
    await expect(row(page, writer)).toHaveCount(1);
    await expect(row(page, sem)).toHaveCount(1);
    await screenshot(page, "lock-kinds", "panel-locks");
    expect(await seriousViolations(page, "panel-locks")).toEqual([]);

    // Nothing writes the semaphore when its first holder's lease ends: the view still drops that permit.
    await expect(s.getByTestId("lock-kind-summary")).toHaveText("1 / 3 permits", { timeout: 10_000 });
    await expect(s.getByTestId("lock-owner")).toHaveAttribute("data-owner", B);

    for (const key of [
      `lock:{${mutex}}`,
      `lock:semaphore:{${sem}}`,
      `lock:rw:{${readers}}`,
      `lock:rw:{${writer}}`,
    ])
      await redis(`DEL ${key}`);
    await expect(row(page, readers)).toHaveCount(0);
  });

  test("the read-write demo charts readers sharing the lock and the writer alone, with its verdict", async ({
    page,
    stack,
  }) => {
    await openDashboard(page, stack.webUrl);
    await page.getByTestId("scenario-read-write").click();
    await expect(page.getByTestId("scenario-read-write")).toHaveAttribute("aria-pressed", "true");
    await expect(page.getByTestId("scenario-status")).toHaveAttribute("data-status", "running");
    // While it runs, the live table beside it shows the demo's lock as a read-write lock.
    const live = page.locator('[data-testid="scenario-locks"] [data-testid="lock-row"]').first();
    await expect(live).toHaveAttribute("data-resource", /^demo:read-write:/);
    await expect(live).toHaveAttribute("data-kind", "read-write");

    await expect(page.getByTestId("rw-verdict")).toHaveAttribute("data-ok", "true", { timeout: 30_000 });
    await expect(page.getByTestId("rw-check")).toHaveCount(3);
    await expect(page.locator('[data-testid="rw-check"][data-pass="true"]')).toHaveCount(3);
    await expect(page.getByTestId("rw-verdict")).toContainText(
      "reader 1, reader 2, reader 3, reader 4, reader 5 read at the same time",
    );

    const holds = page.getByTestId("rw-hold");
    await expect(holds).toHaveCount(6);
    const at = async (actor: string, attr: "acquired" | "released") =>
      Number(await holds.and(page.locator(`[data-actor="${actor}"]`)).getAttribute(`data-${attr}-ms`));
    const firstReadersOut = Math.max(
      await at("reader 1", "released"),
      await at("reader 2", "released"),
      await at("reader 3", "released"),
    );
    expect(await at("writer", "acquired")).toBeGreaterThan(firstReadersOut);
    for (const late of ["reader 4", "reader 5"])
      expect(await at(late, "acquired")).toBeGreaterThan(await at("writer", "released"));
    await expect(holds.and(page.locator('[data-mode="write"]'))).toHaveCount(1);
    // Each lane: a hatched wait, then the hold; the times are in the row as text too.
    await expect(page.locator('[data-testid="rw-track"] [data-tone="wait"]')).toHaveCount(6);
    await expect(page.locator('[data-testid="rw-track"] [data-tone="warn"]')).toHaveCount(1);
    await expect(page.locator('[data-testid="rw-track"] [data-tone="info"]')).toHaveCount(5);
    await expect(holds.first().getByTestId("rw-held")).toHaveText(/^\d+ ms – \d+ ms$/);
    await expect(page.getByTestId("scenario-error")).toHaveCount(0);
    await screenshot(page, "scenarios-read-write", "panel-scenarios");
    expect(await seriousViolations(page, "panel-scenarios")).toEqual([]);
  });
});
