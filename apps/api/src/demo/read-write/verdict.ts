import type { ReadWriteHold, ReadWriteVerdict } from "../../types.js";

/** Two holds overlap when each began before the other ended. */
const overlap = (a: ReadWriteHold, b: ReadWriteHold): boolean =>
  a.acquiredMs < b.releasedMs && b.acquiredMs < a.releasedMs;

const pairs = <T>(list: readonly T[]): [T, T][] =>
  list.flatMap((a, i) => list.slice(i + 1).map((b): [T, T] => [a, b]));

const names = (holds: readonly ReadWriteHold[]) => holds.map((h) => h.actor).join(", ");

/**
 * Judges a read-write run from its holds alone, so the verdict says what happened, whatever was intended:
 * readers shared the lock (two or more held it at once), the writer held it alone (no reader's hold overlaps
 * its own), and the writer was not starved (it got the lock, and every reader that asked after it did got in
 * only once the writer was done).
 */
export function judgeReadWrite(holds: readonly ReadWriteHold[]): ReadWriteVerdict {
  const readers = holds.filter((h) => h.mode === "read");
  const writers = holds.filter((h) => h.mode === "write");
  const shared = pairs(readers).filter(([a, b]) => overlap(a, b));
  const clashes = writers.flatMap((w) => readers.filter((r) => overlap(r, w)).map((r) => [w, r] as const));
  const jumped = writers.flatMap((w) =>
    readers.filter((r) => r.requestedMs > w.requestedMs && r.acquiredMs < w.releasedMs),
  );
  const readersOverlapped = shared.length > 0;
  const writerExclusive = writers.length > 0 && clashes.length === 0;
  const writerNotStarved = writers.length > 0 && jumped.length === 0;
  const sharers = [...new Set(shared.flat())];
  const findings = [
    readersOverlapped
      ? `${names(sharers)} read at the same time`
      : "no two readers ever held the lock at the same time",
    writers.length === 0
      ? "no writer got the lock"
      : writerExclusive
        ? `no reader held it while ${names(writers)} did`
        : `a reader held it while the writer did: ${clashes.map(([w, r]) => `${r.actor} during ${w.actor}`).join(", ")}`,
    writers.length === 0
      ? "the writer was starved"
      : writerNotStarved
        ? "readers that asked after the writer waited until it was done"
        : `readers that asked after the writer got in before it was done: ${names(jumped)}`,
  ];
  return {
    ok: readersOverlapped && writerExclusive && writerNotStarved,
    readersOverlapped,
    writerExclusive,
    writerNotStarved,
    findings,
  };
}
