import type { Redis } from "ioredis";
import { type OpRecord, recordOps } from "../fixtures/wire.mjs";
import type { Source } from "./checker.js";

/** Records the lock scripts an in-process connection sends (exact times: errMs 0). */
export function recorded<T extends Redis>(redis: T, name: string): { redis: T; source: () => Source } {
  const ops: OpRecord[] = [];
  recordOps(redis, { begin: (rec) => ops.push(rec), end: () => {} });
  return { redis, source: () => ({ name, ops, errMs: 0 }) };
}
