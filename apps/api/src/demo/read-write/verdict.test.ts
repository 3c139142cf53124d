import { describe, expect, it } from "vitest";
import type { ReadWriteHold } from "../../types.js";
import { judgeReadWrite } from "./verdict.js";

const hold = (actor: string, mode: "read" | "write", at: [number, number, number]): ReadWriteHold => ({
  actor,
  mode,
  requestedMs: at[0],
  acquiredMs: at[1],
  releasedMs: at[2],
  token: null,
});

/** The story as a correct lock plays it: readers overlap, the writer waits for them, late readers wait for it. */
const good = [
  hold("r1", "read", [0, 1, 600]),
  hold("r2", "read", [100, 101, 700]),
  hold("w", "write", [300, 702, 1200]),
  hold("r3", "read", [400, 1203, 1600]),
  hold("r4", "read", [500, 1204, 1600]),
];

describe("judgeReadWrite", () => {
  it("passes the story as a read-write lock plays it", () => {
    const v = judgeReadWrite(good);
    expect(v).toMatchObject({
      ok: true,
      readersOverlapped: true,
      writerExclusive: true,
      writerNotStarved: true,
    });
    expect(v.findings[0]).toBe("r1, r2, r3, r4 read at the same time");
  });

  it("fails a reader holding while the writer does", () => {
    const v = judgeReadWrite([...good.slice(0, 2), hold("w", "write", [300, 650, 1200]), ...good.slice(3)]);
    expect(v).toMatchObject({ ok: false, writerExclusive: false });
    expect(v.findings[1]).toContain("r2 during w");
  });

  it("fails readers that asked after the writer and got in first (a starved writer)", () => {
    const v = judgeReadWrite([
      hold("r1", "read", [0, 1, 600]),
      hold("w", "write", [300, 1500, 1800]),
      hold("r2", "read", [400, 401, 1400]),
    ]);
    expect(v).toMatchObject({ ok: false, writerExclusive: true, writerNotStarved: false });
    expect(v.findings[2]).toContain("r2");
  });

  it("fails readers that never overlapped, and a run whose writer never got the lock", () => {
    expect(
      judgeReadWrite([hold("r1", "read", [0, 1, 100]), hold("w", "write", [50, 101, 200])]).readersOverlapped,
    ).toBe(false);
    const v = judgeReadWrite(good.filter((h) => h.mode === "read"));
    expect(v).toMatchObject({ ok: false, writerExclusive: false, writerNotStarved: false });
    expect(v.findings.slice(1)).toEqual(["no writer got the lock", "the writer was starved"]);
  });
});
