import { parseConfig, type Runtime } from "../config.js";
import type { CommonLocksOptions, Locks } from "../types.js";
import type { LockBackend } from "./backend.js";
import { LocksCore } from "./locks-core.js";

/** The same Locks over any store (Redlock, PostgreSQL, your own): for backend authors. */
export function createLocksWithBackend(
  backend: LockBackend,
  options: CommonLocksOptions = {},
  /** Time and randomness; the deterministic simulation passes virtual ones. */
  runtime?: Runtime,
): Locks {
  return new LocksCore(backend, parseConfig(options, runtime));
}
