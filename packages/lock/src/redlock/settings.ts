import type { Redis } from "ioredis";
import type { Clock } from "../core/clock.js";

export interface RedlockSettings {
  clients: readonly Redis[];
  /** Where time is read and timers armed: the real clock, or the simulation's virtual one (test/sim). */
  clock: Clock;
  random: () => number;
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
