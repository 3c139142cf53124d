import { describe, expect, it } from "vitest";
import type { LocksDeltaEvent, LockView } from "../types.js";
import { compact } from "./compact.js";

const view = (store: LockView["store"], resource: string, pttlMs: number): LockView => ({
  store,
  key: `lock:{${resource}}`,
  kind: "mutex",
  permits: null,
  readWrite: null,
  resource,
  owners: [{ owner: "api-1:ab", count: 1, instanceId: "api-1", mode: "exclusive" }],
  pttlMs,
  leaseMs: null,
  token: null,
  waiters: 0,
});
const delta = (at: number, d: Partial<LocksDeltaEvent>): LocksDeltaEvent => ({
  kind: "delta",
  at,
  instanceId: "api-1",
  added: [],
  changed: [],
  removed: [],
  ...d,
});

/** What a dashboard holds after applying deltas in order: removed by key, then upserts by store + key. */
function apply(rows: Map<string, LockView>, events: LocksDeltaEvent[]): Map<string, LockView> {
  const out = new Map(rows);
  for (const e of events) {
    for (const [id, l] of out) if (e.removed.includes(l.key)) out.delete(id);
    for (const l of [...e.added, ...e.changed]) out.set(`${l.store}:${l.key}`, l);
  }
  return out;
}

describe("compact", () => {
  it("folds deltas into one with the same effect, TTLs as of the last one", () => {
    const before = new Map([
      ["redis:lock:{a}", view("redis", "a", 5_000)],
      ["postgres:lock:{b}", view("postgres", "b", 5_000)],
    ]);
    const events = [
      delta(1_000, { added: [view("redis", "c", 3_000)] }),
      delta(1_100, { removed: ["lock:{a}"] }),
      delta(1_200, { added: [view("redis", "b", 4_000)], changed: [view("redis", "c", 9_000)] }),
      // b released on Redis; its PostgreSQL lock is re-sent in the same delta, as the observer does.
      delta(1_300, { removed: ["lock:{b}"], added: [view("postgres", "b", 4_700)] }),
      delta(1_400, { added: [view("redis", "d", 2_000)] }),
    ];
    const folded = compact(events);
    expect(folded.at).toBe(1_400);
    const rows = apply(before, [folded]);
    expect([...rows.keys()].sort()).toEqual(["postgres:lock:{b}", "redis:lock:{c}", "redis:lock:{d}"]);
    expect([...rows.keys()].sort()).toEqual([...apply(before, events).keys()].sort());
    expect(rows.get("redis:lock:{c}")?.pttlMs).toBe(9_000 - 200);
    expect(rows.get("postgres:lock:{b}")?.pttlMs).toBe(4_700 - 100);
  });
});
