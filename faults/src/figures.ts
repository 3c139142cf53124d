import { appendFileSync } from "node:fs";
import { expect, inject } from "vitest";
import { check, describe, type FenceRange, type Source } from "./checker.js";

declare module "vitest" {
  export interface ProvidedContext {
    faultsLog: string;
  }
}

/** Prints a scenario's figure on one line, and keeps it for the summary at the end of the run. */
export function figure(line: string): void {
  console.log(`[figure] ${line}`);
  appendFileSync(inject("faultsLog"), `${JSON.stringify({ figure: line })}\n`);
}

/** Runs the no-two-holders checker over one run, prints its figure and fails on any overlap. */
export function assertNoTwoHolders(
  scenario: string,
  sources: readonly Source[],
  fences: Record<string, FenceRange> = {},
) {
  const v = check(sources, fences);
  const known = v.holds.filter((h) => !h.possible).length;
  const possible = v.holds.length - known;
  const errMs = Math.max(0, ...sources.map((s) => s.errMs));
  const seen = (via: string) => v.holds.filter((h) => h.via === via).length;
  const handedOver = [
    seen("local-grant") ? `${seen("local-grant")} granted by the release before` : "",
    seen("message") ? `${seen("message")} from a handoff message` : "",
  ].filter(Boolean);
  const line =
    `no-two-holders (${scenario}): ${known} holds` +
    (handedOver.length ? ` (${handedOver.join(", ")})` : "") +
    (possible ? ` + ${possible} possible` : "") +
    (v.unknown.length ? `, ${v.unknown.length} unknown outcomes (${v.ghosts} granted per the fence)` : "") +
    `, ${v.overlaps.length} overlaps, clock error ≤ ${(errMs * 1000).toFixed(0)} µs`;
  console.log(`[figure] ${line}`);
  appendFileSync(
    inject("faultsLog"),
    `${JSON.stringify({ checker: { scenario, holds: known, possible, unknown: v.unknown.length, overlaps: v.overlaps.length + v.ghostViolations.length } })}\n`,
  );
  expect(describe(v)).toBe("");
  return v;
}
