/** The reason in-flight calls stop waiting: this instance is shutting down. */
export class ShuttingDownError extends Error {
  override readonly name = "ShuttingDownError";
}

/**
 * An instance's requests in flight (streams aside), for a shutdown that answers them rather than cutting
 * their sockets: wait for them, then `stop()` aborts `signal`, which the calls pass to their lock waits and
 * work (never to a write already sent), so each ends with a clear answer, and wait again for those answers.
 */
export class Drain {
  readonly #stop = new AbortController();
  #inFlight = 0;
  #idle: (() => void)[] = [];

  /** Aborted with a ShuttingDownError by stop(). */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  get stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Counts one request in flight; call what it returns once its answer is written (or its socket closed). */
  enter(): () => void {
    this.#inFlight++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (--this.#inFlight === 0) for (const wake of this.#idle.splice(0)) wake();
    };
  }

  stop(instanceId: string): void {
    this.#stop.abort(new ShuttingDownError(`instance ${instanceId} is shutting down`));
  }

  /** True once nothing is in flight, false when `ms` passed first. */
  idle(ms: number): Promise<boolean> {
    if (this.#inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#idle = this.#idle.filter((w) => w !== wake);
        resolve(false);
      }, ms).unref();
      this.#idle.push(wake);
    });
  }
}
