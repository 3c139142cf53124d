import path from "node:path";
import { test as base, expect, type Page } from "@playwright/test";
import { rawCommand } from "../../../scripts/lib/redis.mjs";
import { screenshotDir } from "./harness/paths";
import { readStack, type Stack } from "./harness/stack";

interface Fixtures {
  /** Console errors that a spec expects (for example the 409s of a deliberate double submit). */
  allowedConsoleErrors: RegExp | null;
  consoleErrors: string[];
  redis: (line: string) => Promise<string>;
}

export const test = base.extend<Fixtures, { stack: Stack }>({
  // biome-ignore lint/correctness/noEmptyPattern: Playwright reads fixture dependencies from this pattern.
  stack: [async ({}, use) => use(readStack()), { scope: "worker" }],
  allowedConsoleErrors: [null, { option: true }],
  // biome-ignore lint/correctness/noEmptyPattern: Playwright reads fixture dependencies from this pattern.
  consoleErrors: async ({}, use) => use([]),
  redis: async ({ stack }, use) => use((line) => rawCommand(stack.redisPort, line)),
  page: async ({ page, allowedConsoleErrors, consoleErrors }, use) => {
    collectConsoleErrors(page, consoleErrors, allowedConsoleErrors);
    await use(page);
    expect(consoleErrors, "the page logged errors").toEqual([]);
  },
});

export { expect };

/** Records console errors and uncaught exceptions of `page` into `into`, except the allowed ones. */
export function collectConsoleErrors(page: Page, into: string[], allowed: RegExp | null = null): void {
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    const text = msg.text();
    if (!allowed?.test(text)) into.push(text);
  });
  page.on("pageerror", (err) => into.push(`pageerror: ${err.message}`));
}

/** Opens the dashboard and waits until the live lock stream is connected. */
export async function openDashboard(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await expect(page.getByTestId("connection")).toHaveAttribute("data-state", "connected");
}

export async function screenshot(page: Page, name: string, testId?: string): Promise<void> {
  const file = path.join(screenshotDir, `${name}.png`);
  if (testId) await page.getByTestId(testId).screenshot({ path: file });
  else await page.screenshot({ path: file, fullPage: true });
}

/** A resource name no other spec or run uses. */
export function uniqueResource(label: string): string {
  return `e2e-${label}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}
