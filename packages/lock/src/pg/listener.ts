import type { Pool } from "pg";
import type { ReleaseSubscriber } from "../core/backend.js";
import { ListenConnection } from "./listen-connection.js";

/**
 * LISTEN on one dedicated client checked out of the pool (listen-connection.ts), on first contention; given
 * back on close. There is one channel for every lock, so subscribing to a resource sends nothing: it only
 * filters. If the connection dies, waiters fall back to their timers until it is re-made, and then every
 * subscribed resource is woken, since releases in between went unheard.
 */
export function createPgListener(pool: Pool, onRelease: (resource: string) => void): ReleaseSubscriber {
  const resources = new Set<string>();
  const connection = new ListenConnection(pool, {
    notified(resource) {
      if (resources.has(resource)) onRelease(resource);
    },
    reconnected() {
      for (const r of resources) onRelease(r);
    },
    wanted: () => resources.size > 0,
  });
  return {
    async subscribe(resource) {
      resources.add(resource);
      try {
        await connection.open();
      } catch (err) {
        connection.retryLater();
        throw err;
      }
    },
    unsubscribe(resource) {
      resources.delete(resource);
    },
    async close() {
      resources.clear();
      await connection.close();
    },
  };
}
