// `@lockyard/lock/backend`: for people writing a store. The core's contract with a store (LockBackend),
// the factory that runs the core over one, the clock seam, and the Redis scripts as Lua text. Their shapes
// may change in a minor version; the main entry's surface does not.

export type { Runtime } from "./config.js";
export type {
  AcquireReply,
  LockBackend,
  LockKeys,
  ReadsFn,
  ReleaseReply,
  ReleaseSubscriber,
  RenewItem,
  WriteFn,
} from "./core/backend.js";
export type { Clock, Timer } from "./core/clock.js";
export { realClock } from "./core/clock.js";
export { createLocksWithBackend } from "./core/create.js";
export { scripts } from "./redis/scripts/index.js";
