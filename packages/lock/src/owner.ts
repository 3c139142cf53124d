import { randomFillSync } from "node:crypto";
import { hostname } from "node:os";

export const defaultInstanceId = (): string => `${hostname()}:${process.pid}`;

// Random bytes come from a pool refilled 4 KiB at a time: one syscall per 256 owner ids.
const pool = Buffer.alloc(4096);
let offset = pool.length;

/** `<instanceId>:<128-bit random hex>` */
export function newOwnerId(instanceId: string): string {
  if (offset + 16 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString("hex", offset, offset + 16);
  offset += 16;
  return `${instanceId}:${hex}`;
}
