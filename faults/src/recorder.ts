import type { Redis } from "ioredis";
import { type OpRecord, recordOps } from "../fixtures/wire.mjs";
import type { Source } from "./checker.js";

/** Records the lock scripts an in-process connection sends (exact times: errMs 0). */
export function recorded<T extends Redis>(redis: T, name: string): { redis: T; source: () => Source } {
  const ops: OpRecord[] = [];
  recordOps(redis, { begin: (rec) => ops.push(rec), end: () => {} });
  return { redis, source: () => ({ name, ops, errMs: 0 }) };
}

/**
 * Options for a Locks whose holds the no-two-holders checker judges. The checker builds holds from the lock
 * scripts on the wire; a handoff from another process held from its pub/sub message (`handoffAdoption:
 * "message"`, the default) has no acquire there, so its hold would be invisible and its token a ghost. These
 * Locks adopt every handoff with an attempt instead; holds taken from the message are checked by the
 * simulation and packages/lock/test/handoff/by-message.test.ts.
 */
export const WIRE_CHECKED = { handoffAdoption: "attempt" } as const;
