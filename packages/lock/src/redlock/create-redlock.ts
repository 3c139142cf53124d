import type { Redis } from "ioredis";
import { parseConfig } from "../config.js";
import { LocksCore } from "../core/locks-core.js";
import { InvalidOptionError } from "../errors.js";
import { checkMs, checkNoKeyPrefix } from "../options.js";
import type { CommonLocksOptions, Locks } from "../types.js";
import { createRedlockBackend } from "./backend.js";

export interface RedlockOptions extends CommonLocksOptions {
  /**
   * One ioredis client per independent Redis node (not replicas of each other, not a Cluster). They stay
   * yours: close() does not disconnect them. Give them fail-fast options (`enableOfflineQueue: false`,
   * `maxRetriesPerRequest: 1`, a short `connectTimeout`) so a dead node answers "no" at once.
   */
  clients: readonly Redis[];
  /** Nodes that must agree. Default: a majority, floor(N/2) + 1. Anything below a majority is refused. */
  quorum?: number;
  /** Clock drift allowance, as a fraction of the lease (plus 2 ms). Default 0.01. */
  driftFactor?: number;
  /** A node slower than this counts as no answer. Default 500 (and never more than the lease). */
  nodeTimeoutMs?: number;
}

const REDLOCK_KEYS = [
  "clients",
  "quorum",
  "driftFactor",
  "nodeTimeoutMs",
] as const satisfies readonly (keyof RedlockOptions)[];

/**
 * Locks over independent Redis nodes with the Redlock algorithm: the same `Locks` interface as
 * createLocks, with `token` always null (a counter on independent nodes is not monotonic).
 * Throws InvalidOptionError synchronously on bad options.
 */
export function createRedlock(options: RedlockOptions): Locks {
  if (typeof options !== "object" || options === null)
    throw new InvalidOptionError("options", options, "an object");
  const clients = options.clients as unknown;
  if (!Array.isArray(clients) || clients.length === 0) {
    throw new InvalidOptionError("clients", clients, "a non-empty array of ioredis clients, one per node");
  }
  clients.forEach((c: unknown, i) => {
    const r = c as { defineCommand?: unknown; isCluster?: unknown } | null;
    if (
      typeof r !== "object" ||
      r === null ||
      typeof r.defineCommand !== "function" ||
      r.isCluster === true
    ) {
      throw new InvalidOptionError(`clients[${i}]`, c, "an ioredis Redis client (not a Cluster)");
    }
    checkNoKeyPrefix(`clients[${i}]`, c);
  });
  if (new Set(clients).size !== clients.length) {
    throw new InvalidOptionError("clients", "(the same client twice)", "one distinct client per node");
  }
  const n = clients.length;
  const majority = Math.floor(n / 2) + 1;
  const quorum = options.quorum ?? majority;
  if (!Number.isSafeInteger(quorum) || quorum < majority || quorum > n) {
    // Below a majority two owners could each gather a "quorum" of the same nodes at once.
    throw new InvalidOptionError("quorum", options.quorum, `an integer in [${majority}, ${n}]`);
  }
  const driftFactor = options.driftFactor ?? 0.01;
  if (typeof driftFactor !== "number" || !(driftFactor >= 0 && driftFactor < 0.5)) {
    throw new InvalidOptionError("driftFactor", driftFactor, "a number in [0, 0.5)");
  }
  const nodeTimeoutMs = checkMs("nodeTimeoutMs", options.nodeTimeoutMs ?? 500, 1);
  const cfg = parseConfig(options, undefined, REDLOCK_KEYS);
  const backend = createRedlockBackend({
    clients: clients as Redis[],
    clock: cfg.clock,
    random: cfg.random,
    quorum,
    driftFactor,
    nodeTimeoutMs,
    prefix: cfg.prefix,
  });
  return new LocksCore(backend, cfg);
}
