import type { Contender } from "../types.js";

/**
 * The settings a semaphore runs with: its library's defaults apart from the wait ("recommended"), or the seed
 * design's 100 ms retry and 5 s wait ("seed"), as the mutex scenarios use them.
 */
export interface SemaphoreOptions {
  profile: "recommended" | "seed";
  permits: number;
  /** How long an acquire waits for a permit before it counts as a timeout. */
  waitMs: number;
}

/**
 * One counting-semaphore implementation under test. Its Contender's `acquire(key)` takes one permit of the
 * `permits`-permit semaphore named `key` (null on a timeout), and the Held's release gives it back.
 */
export interface SemaphoreFactory {
  /** Stable id used in JSON and as the connection-name prefix (`lib-<id>`), as for the mutex contenders. */
  readonly id: string;
  readonly label: string;
  create(redisUrl: string, options: SemaphoreOptions): Promise<Contender>;
}
