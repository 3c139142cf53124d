import { describe, expect, it } from "vitest";
import type { OpRecord } from "../fixtures/wire.mjs";
import { check, holdsOf } from "./checker.js";

let id = 1;
const op = (
  o: OpRecord["op"],
  owner: string,
  sent: number,
  done: number | undefined,
  reply: unknown,
  extra: Partial<OpRecord> = {},
): OpRecord => ({
  id: id++,
  op: o,
  items: [{ key: "lock:{r}", owner, leaseMs: 100 }],
  sent,
  done,
  outcome: done === undefined ? "pending" : "ok",
  reply,
  ...extra,
});

describe("no-two-holders checker", () => {
  it("a hold lasts from the grant's reply to the release's send, capped by send + lease", () => {
    const { holds } = holdsOf({
      name: "p",
      errMs: 0,
      ops: [op("acquire", "A", 0, 1, [1, 1, 7]), op("release", "A", 50, 51, [2, 0])],
    });
    expect(holds).toEqual([expect.objectContaining({ owner: "A", start: 1, end: 50, token: 7 })]);
    const expired = holdsOf({ name: "p", errMs: 0, ops: [op("acquire", "A", 0, 1, [1, 1, 7])] }).holds;
    expect(expired[0]).toMatchObject({ start: 1, end: 100 });
  });

  it("renewals that answer 1 extend the deadline from their send; a refused one does not", () => {
    const ops = [
      op("acquire", "A", 0, 1, [1, 1, 1]),
      op("renew", "A", 30, 31, 1),
      op("renew", "A", 60, 61, 0),
    ];
    expect(holdsOf({ name: "p", errMs: 0, ops }).holds[0]!.end).toBe(130);
  });

  it("a reply that arrives after the deadline is no hold at all", () => {
    expect(holdsOf({ name: "p", errMs: 0, ops: [op("acquire", "A", 0, 150, [1, 1, 1])] }).holds).toEqual([]);
  });

  it("flags overlapping holds of different owners, and clean handoffs pass", () => {
    const a = {
      name: "a",
      errMs: 0,
      ops: [op("acquire", "A", 0, 1, [1, 1, 1]), op("release", "A", 40, 41, [2, 0])],
    };
    const ok = { name: "b", errMs: 0, ops: [op("acquire", "B", 39, 40.5, [1, 1, 2])] };
    expect(check([a, ok]).overlaps).toHaveLength(0);
    const bad = { name: "b", errMs: 0, ops: [op("acquire", "B", 20, 21, [1, 1, 2])] };
    expect(check([a, bad]).overlaps).toMatchObject([{ overlapMs: 19 }]);
    // The clock-mapping error of a child widens its holds.
    expect(check([a, { ...ok, errMs: 1 }]).overlaps).toHaveLength(1);
  });

  it("an acquire a killed process never reported back is a possible hold until it died", () => {
    const killed = { name: "k", errMs: 0, diedAt: 30, ops: [op("acquire", "K", 10, undefined, undefined)] };
    const after = { name: "b", errMs: 0, ops: [op("acquire", "B", 31, 32, [1, 1, 2])] };
    const during = { name: "b", errMs: 0, ops: [op("acquire", "B", 20, 21, [1, 1, 2])] };
    expect(check([killed, after]).overlaps).toHaveLength(0);
    expect(check([killed, during]).overlaps).toHaveLength(1);
  });

  it("resolves unknown acquire outcomes with the fence counter", () => {
    const a = {
      name: "a",
      errMs: 0,
      ops: [op("acquire", "A", 0, 1, [1, 1, 1]), op("release", "A", 10, 11, [2, 0])],
    };
    const u = {
      name: "u",
      errMs: 0,
      ops: [op("acquire", "U", 12, 13, undefined, { outcome: "error", error: "Connection is closed." })],
    };
    const late = { name: "c", errMs: 0, ops: [op("acquire", "C", 200, 201, [1, 1, 3])] };
    const early = { name: "c", errMs: 0, ops: [op("acquire", "C", 50, 51, [1, 1, 3])] };
    const fences = { "lock:{r}": { before: 0, after: 3 } };
    // Token 2 went to the unknown acquire: C must not start before it could have expired (12 + 100).
    expect(check([a, u, late], fences)).toMatchObject({ ghosts: 1, ghostViolations: [] });
    expect(check([a, u, early], fences).ghostViolations).toHaveLength(1);
    // No missing token: the unknown acquire was not granted, so C may start at once.
    expect(
      check([a, u, { ...early, ops: [op("acquire", "C", 50, 51, [1, 1, 2])] }], {
        "lock:{r}": { before: 0, after: 2 },
      }),
    ).toMatchObject({ ghosts: 0, ghostViolations: [], overlaps: [] });
    // Errors raised before anything was written are known failures.
    const offline = { ...u, ops: [{ ...u.ops[0]!, notSent: true }] };
    expect(check([a, offline, early]).unknown).toHaveLength(0);
  });

  it("a release that grants the waiter it names ({4}) opens that waiter's hold from the release's send", () => {
    const next = { owner: "A2", leaseMs: 80 };
    const ops = [op("acquire", "A1", 0, 1, [1, 1, 7]), op("release", "A1", 40, 41, [4, 8, 0], { next })];
    expect(holdsOf({ name: "p", errMs: 0, ops }).holds).toEqual([
      expect.objectContaining({ owner: "A1", start: 1, end: 40, token: 7 }),
      expect.objectContaining({ owner: "A2", start: 40, end: 120, token: 8 }),
    ]);
  });

  it("a handoff message is a hold from its receipt until the last probe with a smaller token + the claim", () => {
    const handed = (at: number, token: number) =>
      op("handed", "B", at, at, undefined, { token, items: [{ key: "lock:{r}", owner: "B", leaseMs: 50 }] });
    // Two refused attempts saw tokens 7 and 8: a handoff with token 9 ran after the later one's send (20).
    const refused = [op("acquire", "B", 0, 1, [0, 90, 7]), op("acquire", "B", 20, 21, [0, 70, 8])];
    const held = holdsOf({ name: "b", errMs: 0, ops: [...refused, handed(30, 9)] }).holds;
    expect(held).toEqual([expect.objectContaining({ owner: "B", start: 30, end: 70, token: 9 })]);
    // A late message, whose token the refusal had already seen issued: no hold (the owner looks with an attempt).
    expect(holdsOf({ name: "b", errMs: 0, ops: [refused[1]!, handed(30, 8)] }).holds).toEqual([]);
    // A message that came after its claim ran out (the process was paused) is no hold, and does not hide the
    // handoff that comes next.
    const late = [refused[0]!, handed(80, 9), op("acquire", "B", 90, 91, [0, 50, 9]), handed(120, 10)];
    expect(holdsOf({ name: "b", errMs: 0, ops: late }).holds).toEqual([
      expect.objectContaining({ owner: "B", start: 120, end: 140, token: 10 }),
    ]);
    // A message that came after the owner released (it refused a grant answered too late, and gave it on) is no
    // hold: nobody waits for it any more.
    const gaveBack = [
      ...refused,
      op("acquire", "B", 25, 28, [1, 1, 9]),
      op("release", "B", 29, 30, [3, 10], { next: { owner: "C", leaseMs: 100 } }),
    ];
    expect(holdsOf({ name: "b", errMs: 0, ops: [...gaveBack, handed(31, 9)] }).holds).toEqual([
      expect.objectContaining({ owner: "B", start: 28, end: 29, via: "acquire" }),
    ]);
    // A release of its own process that queued it ({3, token}) is such a probe too.
    const queued = op("release", "A", 10, 11, [3, 5], { next: { owner: "B", leaseMs: 100 } });
    expect(holdsOf({ name: "b", errMs: 0, ops: [queued, handed(30, 6)] }).holds).toEqual([
      expect.objectContaining({ owner: "B", start: 30, end: 60, token: 6 }),
    ]);
    // Its token is a known grant, so it is no ghost, and a hold of another owner inside the claim overlaps it.
    const other = { name: "c", errMs: 0, ops: [op("acquire", "C", 40, 41, [1, 1, 10])] };
    const v = check([{ name: "b", errMs: 0, ops: [...refused, handed(30, 9)] }, other], {
      "lock:{r}": { before: 6, after: 10 },
    });
    expect(v.ghostViolations.filter((m) => m.includes("token 9"))).toEqual([]);
    expect(v.overlaps).toMatchObject([{ a: { owner: "B" }, b: { owner: "C" } }]);
  });
});
