import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, openDashboard, test, uniqueResource } from "./fixtures";

const OWNER = "e2e-a11y:0123456789abcdef0123456789abcdef";

const WIDTHS = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;
const SCHEMES = ["light", "dark"] as const;

interface Finding {
  id: string;
  impact: string;
  nodeCount: number;
  nodes: string[];
}

/** Runs axe-core (WCAG 2.0–2.2 A and AA rules) on the whole page; returns serious and critical findings. */
async function seriousViolations(page: Page): Promise<Finding[]> {
  const result = await new AxeBuilder({ page })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"])
    .analyze();
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({
      id: v.id,
      impact: v.impact ?? "",
      nodeCount: v.nodes.length,
      nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(" ")} — ${n.failureSummary ?? ""}`),
    }));
}

function count(findings: Finding[]): string {
  const nodes = findings.reduce((n, f) => n + f.nodeCount, 0);
  return `${findings.length} rules / ${nodes} nodes`;
}

test.describe("Accessibility (axe-core, WCAG 2.2 AA)", () => {
  test.describe.configure({ timeout: 120_000 });

  for (const size of WIDTHS) {
    for (const scheme of SCHEMES) {
      test(`${size.name} ${scheme}: no serious or critical violations idle and after a run`, async ({
        page,
        stack,
        redis,
      }) => {
        await page.setViewportSize({ width: size.width, height: size.height });
        await page.emulateMedia({ colorScheme: scheme });
        const resource = uniqueResource("a11y");
        await redis(`HSET lock:{${resource}} ${OWNER} 2`);
        await redis(`PEXPIRE lock:{${resource}} 30000`);
        await openDashboard(page, stack.webUrl);
        await expect(page.locator(`[data-testid="lock-table"] [data-resource="${resource}"]`)).toBeVisible();
        await expect(page.getByTestId("job-run").first()).toBeVisible({ timeout: 15_000 });

        const idle = await seriousViolations(page);
        test.info().annotations.push({ type: "axe-idle", description: String(count(idle)) });
        console.log(`axe ${size.name} ${scheme} idle: ${count(idle)} serious/critical`);
        expect(idle, JSON.stringify(idle, null, 1)).toEqual([]);

        // After a run: a flash sale (verdict, report, chart, history), a scenario, the read-write demo and an
        // order race.
        await page.getByTestId("mode-redis").click();
        await page.getByTestId("burst-requests").fill("60");
        await page.getByTestId("burst-stock").fill("20");
        await page.getByTestId("burst-work").fill("2");
        await page.getByTestId("burst-start").click();
        await expect(page.getByTestId("burst-verdict")).toHaveAttribute("data-safe", /true|false/, {
          timeout: 45_000,
        });
        await expect(page.getByTestId("history-row").first()).toBeVisible();
        await page.getByTestId("scenario-fast").check();
        await page.getByTestId("scenario-reentrancy").click();
        await expect(page.getByTestId("scenario-done")).toBeVisible({ timeout: 45_000 });
        // The read-write demo's verdict and chart (a table of lanes), with kinds in the live table beside it.
        await page.getByTestId("scenario-read-write").click();
        await expect(page.getByTestId("rw-verdict")).toBeVisible({ timeout: 30_000 });
        await page.getByTestId("order-parallel").fill("3");
        await page.getByTestId("order-submit").click();
        await expect(page.locator('[data-testid="order-attempt"][data-outcome="pending"]')).toHaveCount(0);

        const after = await seriousViolations(page);
        test.info().annotations.push({ type: "axe-after-run", description: String(count(after)) });
        console.log(`axe ${size.name} ${scheme} after a run: ${count(after)} serious/critical`);
        await redis(`DEL lock:{${resource}}`);
        expect(after, JSON.stringify(after, null, 1)).toEqual([]);
      });
    }
  }
});
