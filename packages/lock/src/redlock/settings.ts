import type { Redis } from "ioredis";

export interface RedlockSettings {
  clients: readonly Redis[];
  quorum: number;
  driftFactor: number;
  /** The longest wait for one node's answer; a slower node counts as no answer. */
  nodeTimeoutMs: number;
  prefix: string;
}

/** The clock drift Redlock allows for a lease: lease * driftFactor + 2 ms. */
export function driftMs(s: RedlockSettings, leaseMs: number): number {
  return Math.floor(leaseMs * s.driftFactor) + 2;
}
