/** The reason in-flight calls stop waiting: this instance is shutting down. */
export class ShuttingDownError extends Error {
  override readonly name = "ShuttingDownError";
}

/**
 * An instance's requests in flight (streams aside), for a shutdown that answers them rather than cutting
 * their sockets: wait for them, then `stop()` aborts the signals the calls took from `watch()` and pass to
 * their lock waits and work (never to a write already sent), so each ends with a clear answer, and wait
 * again for those answers.
 */
export class Drain {
  readonly #stop = new AbortController();
  readonly #calls = new Set<AbortController>();
  #inFlight = 0;
  #idle: (() => void)[] = [];

  get stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Calls whose signal stop() would abort now. */
  get watching(): number {
    return this.#calls.size;
  }

  /**
   * A signal for one call's waits and work, aborted by `also` (the request's, or a lock's) or by stop(); call
   * `end()` once the call is over. Not AbortSignal.any over one long-lived signal: on Node 20 every call would
   * stay in that signal's dependants (a heap that grew ~15 MB per 200 000 calls, and each call slower).
   */
  watch(also?: AbortSignal): { signal: AbortSignal; end(): void } {
    const call = new AbortController();
    if (this.stopping) call.abort(this.#stop.signal.reason);
    else if (also?.aborted) call.abort(also.reason);
    if (call.signal.aborted) return { signal: call.signal, end: () => {} };
    const follow = () => call.abort(also?.reason);
    also?.addEventListener("abort", follow, { once: true });
    this.#calls.add(call);
    return {
      signal: call.signal,
      end: () => {
        this.#calls.delete(call);
        also?.removeEventListener("abort", follow);
      },
    };
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
    for (const call of this.#calls) call.abort(this.#stop.signal.reason);
    this.#calls.clear();
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
