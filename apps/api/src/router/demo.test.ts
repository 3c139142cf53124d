import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext } from "../../test/context.js";
import { watchAll } from "../../test/runs.js";
import type { ScenarioEvent, ScenarioStep } from "../types.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext();
});
afterAll(() => t.close());

const steps = (events: ScenarioEvent[]) => events.filter((e): e is ScenarioStep => e.type === "event");
const done = (events: ScenarioEvent[]) => events.at(-1);

async function run(name: "watchdog" | "reentrancy" | "misdelete" | "fencing" | "crash", timeScale: number) {
  const { runId } = await t.caller.demo.scenario.start({ name, timeScale });
  const events = (await watchAll(t.caller, runId)).map((e) => e.event as ScenarioEvent);
  const last = done(events);
  expect(last?.type).toBe("done");
  // Timelines are ordered and every lock they show belongs to the scenario's own namespace.
  const seqs = events.map((e) => e.seq);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  for (const s of steps(events))
    for (const l of s.locks) expect(l.resource).toMatch(new RegExp(`^demo:${name}:`));
  return { events, steps: steps(events), last: last as Extract<ScenarioEvent, { type: "done" }> };
}

describe("demo.scenario", () => {
  it("watchdog: renewals keep a lock alive past its lease", async () => {
    const r = await run("watchdog", 0.1);
    expect(r.last).toMatchObject({ ok: true, name: "watchdog" });
    expect(r.steps.filter((s) => s.kind === "renewed").length).toBeGreaterThanOrEqual(2);
    const held = r.steps.filter((s) => s.kind === "renewed").map((s) => s.locks.length);
    expect(held.every((n) => n === 1)).toBe(true);
    expect(r.steps.at(-1)!.locks).toHaveLength(0);
  });

  it("reentrancy: count 1 → 2 → 1 → gone", async () => {
    const r = await run("reentrancy", 0.1);
    expect(r.last.ok).toBe(true);
    const counts = r.steps.map((s) => s.locks[0]?.owners[0]?.count ?? 0);
    expect(counts).toEqual([1, 2, 1, 0]);
  });

  it("misdelete: the late release answers not-owner and the second client keeps the lock", async () => {
    const r = await run("misdelete", 0.2);
    expect(r.last.ok).toBe(true);
    const rejected = r.steps.find((s) => s.kind === "rejected");
    expect(rejected?.data.result).toBe("not-owner");
    expect(rejected?.locks).toHaveLength(1);
    const bAcquired = r.steps.find((s) => s.actor === "client B" && s.kind === "acquired");
    expect(rejected?.locks[0]?.token).toBe(bAcquired?.data.token);
  });

  it("fencing: the paused holder's late write is rejected as stale", async () => {
    const r = await run("fencing", 0.25);
    expect(r.last.ok).toBe(true);
    const bWrite = r.steps.find((s) => s.actor === "client B" && s.kind === "write");
    const aWrite = r.steps.find((s) => s.actor === "client A" && s.kind === "rejected");
    expect(bWrite?.data.ok).toBe(true);
    expect(aWrite?.data.ok).toBe(false);
    expect(Number(aWrite?.data.token)).toBeLessThan(Number(bWrite?.data.token));
  });

  it("crash: a SIGKILLed holder's lock frees at its lease end", async () => {
    const r = await run("crash", 0.25);
    expect(r.last.ok).toBe(true);
    const b = r.steps.find((s) => s.actor === "client B" && s.kind === "acquired");
    // Lease 750 ms at this scale: B gets it after the lease, and not much later.
    expect(Number(b?.data.afterKillMs)).toBeLessThanOrEqual(750 + 1_000);
    expect(r.steps.at(-1)!.locks).toHaveLength(0);
  });

  it("rejects unknown scenarios and out-of-range time scales", async () => {
    for (const input of [
      { name: "nope" },
      { name: "crash", timeScale: 0 },
      { name: "crash", timeScale: 2 },
    ]) {
      // biome-ignore lint/suspicious/noExplicitAny: deliberately ill-typed input
      const err = await t.caller.demo.scenario.start(input as any).catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe("BAD_REQUEST");
    }
  });
});
