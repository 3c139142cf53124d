import type { Contender, ContenderFactory, Held } from "./types.js";

/** A FIFO mutex per key inside this process: the best any distributed lock could do (no Redis for the lock). */
class FifoMutex {
  private held = false;
  private readonly queue: (() => void)[] = [];

  async acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  /** Hands the lock straight to the head of the queue, so it never looks free in between. */
  release(): boolean {
    const next = this.queue.shift();
    if (next) next();
    else this.held = false;
    return this.queue.length === 0 && !this.held;
  }
}

export const floor: ContenderFactory = {
  id: "floor",
  label: "in-process floor",
  async create(): Promise<Contender> {
    const mutexes = new Map<string, FifoMutex>();
    return {
      settings:
        "in-process FIFO mutex (no Redis calls for the lock); the work's GET and SET still go to Redis",
      async acquire(key) {
        let m = mutexes.get(key);
        if (!m) {
          m = new FifoMutex();
          mutexes.set(key, m);
        }
        await m.acquire();
        const mutex = m;
        const held: Held = {
          async release() {
            if (mutex.release()) mutexes.delete(key);
          },
        };
        return held;
      },
      async close() {},
    };
  },
};
