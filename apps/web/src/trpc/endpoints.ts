type Listener = (current: string) => void;

/**
 * The API base URLs in order of preference. A request that cannot reach the current one moves
 * everyone to the next; the list wraps around, so a recovered instance is used again later.
 */
export class ApiEndpoints {
  readonly urls: readonly string[];
  #index = 0;
  #listeners = new Set<Listener>();

  constructor(urls: readonly string[]) {
    if (urls.length === 0) throw new Error("ApiEndpoints needs at least one URL");
    this.urls = urls;
  }

  current(): string {
    return this.urls[this.#index] as string;
  }

  /** Moves on from `failed`, unless another caller already did. Returns the URL now current. */
  failover(failed: string): string {
    if (failed === this.current() && this.urls.length > 1) {
      this.#index = (this.#index + 1) % this.urls.length;
      for (const l of this.#listeners) l(this.current());
    }
    return this.current();
  }

  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/**
 * A fetch for httpBatchLink: requests are addressed to the first URL and rewritten to the current one.
 * A network failure (not an HTTP error) fails over and tries each remaining URL once.
 */
export function failoverFetch(endpoints: ApiEndpoints): typeof fetch {
  const base = endpoints.urls[0] as string;
  return async (input, init) => {
    const raw = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const path = raw.startsWith(base) ? raw.slice(base.length) : null;
    if (path === null) return fetch(input, init);
    let lastError: unknown;
    for (let i = 0; i < endpoints.urls.length; i++) {
      const url = endpoints.current();
      try {
        return await fetch(url + path, init);
      } catch (err) {
        if (init?.signal?.aborted) throw err;
        lastError = err;
        endpoints.failover(url);
      }
    }
    throw lastError;
  };
}
