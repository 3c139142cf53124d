import type { Page } from "@playwright/test";
import { expect, openDashboard, test, uniqueResource } from "./fixtures";
import { type MainThreadTask, traceMainThread } from "./harness/main-thread";

const OWNER = "e2e-perf:0123456789abcdef0123456789abcdef";

/** Records every long task (> 50 ms) from the first script on, into `window.__longTasks`. */
async function observeLongTasks(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __longTasks: { start: number; duration: number }[] };
    w.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: "longtask", buffered: true });
  });
}

async function longTasksSince(page: Page, since: number): Promise<{ start: number; duration: number }[]> {
  return page.evaluate(
    (t) =>
      (window as unknown as { __longTasks: { start: number; duration: number }[] }).__longTasks.filter(
        (x) => x.start >= t,
      ),
    since,
  );
}

function overCpu(tasks: MainThreadTask[], ms: number): MainThreadTask[] {
  return tasks.filter((t) => t.cpuMs > ms);
}

function longest(tasks: MainThreadTask[]): string {
  const t = tasks.reduce<MainThreadTask>((a, b) => (b.cpuMs > a.cpuMs ? b : a), { cpuMs: 0, wallMs: 0 });
  return `${t.cpuMs.toFixed(1)} ms (wall ${t.wallMs.toFixed(1)} ms) of ${tasks.length} tasks`;
}

/** Locks a test created, dropped after it whether it passed or not, so a failure cannot crowd the next test's table. */
const created: { prefix: string; n: number }[] = [];

test.afterEach(async ({ redis }) => {
  for (const { prefix, n } of created.splice(0)) await dropMany(redis, prefix, n);
});

/** Creates `n` held locks in one round trip (a Lua loop), each with `ttlMs` left. */
async function holdMany(redis: (line: string) => Promise<string>, prefix: string, n: number, ttlMs: number) {
  created.push({ prefix, n });
  const script = `for i=1,${n} do local k='lock:{${prefix}-'..string.format('%04d',i)..'}' redis.call('HSET',k,'${OWNER}',1) redis.call('PEXPIRE',k,${ttlMs}) end return ${n}`;
  expect(await redis(`EVAL "${script}" 0`)).toBe(`:${n}`);
}

async function dropMany(redis: (line: string) => Promise<string>, prefix: string, n: number) {
  const script = `for i=1,${n} do redis.call('DEL','lock:{${prefix}-'..string.format('%04d',i)..'}') end return 1`;
  await redis(`EVAL "${script}" 0`);
}

test.describe("Light on the CPU", () => {
  test.describe.configure({ timeout: 120_000 });

  test("idle with 10 locks renewing every few seconds: ≤ 10 % of a core, no long task over 50 ms", async ({
    page,
    stack,
    redis,
  }) => {
    await observeLongTasks(page);
    const prefix = uniqueResource("idle");
    await holdMany(redis, prefix, 10, 20_000);
    await openDashboard(page, stack.webUrl);
    await expect(page.locator(`[data-testid="lock-table"] [data-resource^="${prefix}"]`)).toHaveCount(10);
    // Let the first render, the row highlights and the polling queries settle.
    await page.waitForTimeout(2500);

    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable");
    const metrics = async () => {
      const { metrics } = await cdp.send("Performance.getMetrics");
      return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
    };
    const windowMs = 12_000;
    const since = await page.evaluate(() => performance.now());
    const m0 = await metrics();
    const w0 = Date.now();
    // One renewal every 3 s, like a watchdog: each bar jumps back and restarts its animation.
    const renewals = async (ms: number) => {
      for (let elapsed = 0; elapsed < ms; elapsed += 3000) {
        await page.waitForTimeout(3000);
        await redis(
          `EVAL "for i=1,10 do redis.call('PEXPIRE','lock:{${prefix}-'..string.format('%04d',i)..'}',20000) end return 1" 0`,
        );
      }
    };
    await renewals(windowMs);
    const m1 = await metrics();
    const wallSeconds = (Date.now() - w0) / 1000;
    // Then the same again under a trace, for each task's CPU time (tracing costs CPU, so not measured above).
    const tasks = await traceMainThread(page, () => renewals(6000));
    const per = (name: string) => ((m1[name] ?? Number.NaN) - (m0[name] ?? Number.NaN)) / wallSeconds;
    // ThreadTime is the renderer main thread's CPU time; TaskDuration is the wall time of its tasks, which
    // grows when other processes compete for the cores. The target is CPU: "≤ 10 % of a core".
    const share = per("ThreadTime");
    const long = await longTasksSince(page, since);
    console.log(
      `idle, 10 locks, ${wallSeconds.toFixed(1)} s: main-thread CPU ${(share * 100).toFixed(1)} % of a core, ` +
        `task time ${(per("TaskDuration") * 100).toFixed(1)} %, script ${(per("ScriptDuration") * 100).toFixed(1)} %, ` +
        `${per("LayoutCount").toFixed(1)} layouts/s, ${per("RecalcStyleCount").toFixed(1)} style recalcs/s; ` +
        `long tasks (wall ms): ${long.map((t) => Math.round(t.duration)).join(", ") || "none"}; ` +
        `longest task CPU ${longest(tasks)}`,
    );
    const ttl = page.locator(
      `[data-testid="lock-table"] [data-resource="${prefix}-0001"] [data-testid="lock-ttl"]`,
    );
    await expect(ttl, "the renewals were seen").not.toHaveAttribute("data-renewals", "0");
    expect(share, "main-thread share of one core while idle").toBeLessThanOrEqual(0.1);
    // A long task is one that keeps the main thread busy: judged by its CPU time, since on a shared machine the
    // observer's wall-clock durations also count the time other processes held the core.
    expect(overCpu(tasks, 50), "main-thread tasks over 50 ms of CPU").toEqual([]);
  });

  test("1 000 held locks: the table pages with a count, stays responsive, filtering finds one", async ({
    page,
    stack,
    redis,
  }) => {
    await observeLongTasks(page);
    const prefix = uniqueResource("many");
    await holdMany(redis, prefix, 1000, 60_000);
    await openDashboard(page, stack.webUrl);
    const panel = page.getByTestId("panel-locks");
    await page.getByTestId("lock-filter").fill(prefix);
    await expect(panel.getByTestId("lock-count")).toContainText("1,000 of");
    await expect(panel.getByTestId("lock-page-text")).toHaveText("1–25 of 1,000");
    await expect(panel.locator('[data-testid="lock-row"]')).toHaveCount(25);
    await page.getByTestId("lock-filter").fill("");
    await expect(panel.getByTestId("lock-count")).toContainText(/^[\d,]+ held/);
    await page.waitForTimeout(1500);

    // Idle with 1 000 locks: nothing may block the main thread for 200 ms.
    const since = await page.evaluate(() => performance.now());
    const tasks = await traceMainThread(page, () => page.waitForTimeout(6000));
    const long = await longTasksSince(page, since);
    console.log(
      `1 000 locks, idle 6 s: long tasks (wall ms) ${long.map((t) => Math.round(t.duration)).join(", ") || "none"}; ` +
        `longest task CPU ${longest(tasks)}`,
    );
    expect(overCpu(tasks, 200), "main-thread tasks over 200 ms of CPU").toEqual([]);

    // The TTL bars still count down.
    const ttl = panel.locator('[data-testid="lock-row"] [data-testid="lock-ttl"]').first();
    // Above 10 s the text (and its data-remaining-ms) changes once a second, so a fixed 800 ms wait could
    // fall between two changes; poll for up to 3 s instead.
    const a = Number(await ttl.getAttribute("data-remaining-ms"));
    await expect
      .poll(async () => Number(await ttl.getAttribute("data-remaining-ms")), { timeout: 3000 })
      .toBeLessThan(a - 300);

    // Sorting by TTL and paging work on the whole set.
    await panel.getByTestId("lock-page-next").click();
    await expect(panel.getByTestId("lock-page-text")).toContainText("26–50 of");
    await panel.getByTestId("sort-ttl").click();
    await expect(panel.locator('th[aria-sort="ascending"]')).toContainText("TTL");
    await expect(panel.getByTestId("lock-page-text")).toContainText(/^1–25 of/);

    // Filtering finds the one lock.
    const one = `${prefix}-0537`;
    await page.getByTestId("lock-filter").fill(one);
    await expect(panel.locator('[data-testid="lock-row"]')).toHaveCount(1);
    await expect(panel.locator(`[data-testid="lock-row"][data-resource="${one}"]`)).toBeVisible();
    await expect(panel.getByTestId("lock-count")).toContainText(/^1 of/);
    await expect(panel.getByTestId("lock-pager")).toHaveCount(0);
  });
});

test.describe("Reduced motion", () => {
  test("TTL bars step at most once a second, with no transitions, highlights or smooth scrolling", async ({
    page,
    stack,
    redis,
  }) => {
    await page.emulateMedia({ reducedMotion: "reduce" });
    const resource = uniqueResource("calm");
    await redis(`HSET lock:{${resource}} ${OWNER} 1`);
    await redis(`PEXPIRE lock:{${resource}} 30000`);
    await openDashboard(page, stack.webUrl);
    await page.getByTestId("lock-filter").fill(resource);
    const row = page.locator(`[data-testid="lock-table"] [data-resource="${resource}"]`);
    await expect(row).toBeVisible();
    // 40 samples over 2 s, taken in the page so the test's own round trips do not space them out.
    const states = await row.evaluate(async (r) => {
      const fill = r.querySelector(".ly-ttl-fill") as HTMLElement;
      const text = r.querySelector(".ly-ttl-text") as HTMLElement;
      const seen = new Set<string>();
      const t0 = performance.now();
      for (let i = 0; i < 40; i++) {
        await new Promise((res) => setTimeout(res, t0 + (i + 1) * 50 - performance.now()));
        seen.add(`${getComputedStyle(fill).transform}|${text.textContent}`);
      }
      return [...seen];
    });
    expect(states.length, states.join("\n")).toBeLessThanOrEqual(3);

    const styles = await page.evaluate(() => {
      const probe = (cls: string) => {
        const el = document.createElement("div");
        el.className = cls;
        document.body.append(el);
        const cs = getComputedStyle(el);
        const out = { transition: cs.transitionDuration, animation: cs.animationName };
        el.remove();
        return out;
      };
      return {
        scroll: getComputedStyle(document.documentElement).scrollBehavior,
        progress: probe("ly-progress-fill").transition,
        rowAnimation: (() => {
          const table = document.createElement("table");
          table.className = "ly-table";
          table.innerHTML = '<tbody><tr class="row-new"><td>x</td></tr></tbody>';
          document.body.append(table);
          const name = getComputedStyle(table.querySelector("td") as Element, "::after").animationName;
          table.remove();
          return name;
        })(),
      };
    });
    expect(styles).toEqual({ scroll: "auto", progress: "0s", rowAnimation: "none" });
    await redis(`DEL lock:{${resource}}`);
  });

  test("without reduced motion the bar moves every frame on the compositor", async ({
    page,
    stack,
    redis,
  }) => {
    const resource = uniqueResource("moving");
    await redis(`HSET lock:{${resource}} ${OWNER} 1`);
    await redis(`PEXPIRE lock:{${resource}} 30000`);
    await openDashboard(page, stack.webUrl);
    // Filtered, so the row is on the first page however many other locks are held.
    await page.getByTestId("lock-filter").fill(resource);
    const fill = page.locator(`[data-testid="lock-table"] [data-resource="${resource}"] .ly-ttl-fill`);
    await expect(fill).toBeVisible();
    const info = await fill.evaluate(async (el) => {
      const seen = new Set<string>();
      for (let i = 0; i < 20; i++) {
        seen.add(getComputedStyle(el).transform);
        await new Promise((r) => setTimeout(r, 50));
      }
      const running = el.getAnimations().map((a) => (a as CSSAnimation).playState);
      return { distinct: seen.size, running };
    });
    expect(info.distinct).toBeGreaterThan(10);
    expect(info.running).toContain("running");
    await redis(`DEL lock:{${resource}}`);
  });
});
