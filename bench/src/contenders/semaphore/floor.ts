import type { Contender, Held } from "../types.js";
import type { SemaphoreFactory } from "./types.js";

/** A FIFO counting semaphore inside this process: the best any distributed semaphore could do. */
class FifoSemaphore {
  private free: number;
  private readonly queue: (() => void)[] = [];

  constructor(permits: number) {
    this.free = permits;
  }

  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  /** Hands the permit straight to the head of the queue, so it never looks free in between. */
  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.free++;
  }
}

export const semaphoreFloor: SemaphoreFactory = {
  id: "floor",
  label: "in-process floor",
  async create(_redisUrl, { permits }): Promise<Contender> {
    const semaphores = new Map<string, FifoSemaphore>();
    return {
      settings: `in-process FIFO counting semaphore of ${permits} permits (no Redis calls for the lock); the work's INCR and DECR still go to Redis`,
      async acquire(key) {
        let s = semaphores.get(key);
        if (!s) {
          s = new FifoSemaphore(permits);
          semaphores.set(key, s);
        }
        await s.acquire();
        const semaphore = s;
        const held: Held = { release: async () => semaphore.release() };
        return held;
      },
      async close() {},
    };
  },
};
