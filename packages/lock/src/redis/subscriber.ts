import type { Cluster, Redis } from "ioredis";
import type { ReleaseSubscriber } from "../core/backend.js";
import { releaseChannel, resourceOfChannel } from "../resource.js";
import type { RedisClient } from "./scripts/index.js";
import { whenReady } from "./when-ready.js";

/**
 * One shared subscriber connection per Locks: `redis.duplicate()`, made on first contention.
 * On a Cluster it uses SSUBSCRIBE (the release script SPUBLISHes to the lock's own slot).
 */
export function createRedisSubscriber(
  redis: RedisClient,
  sharded: boolean,
  prefix: string,
  onRelease: (resource: string, message: string) => void,
  onResubscribed: () => void = () => {},
): ReleaseSubscriber {
  let conn: Redis | Cluster | undefined;
  // A Cluster's sharded subscribers connect per shard on their own; only a plain connection waits (when-ready.ts).
  let ready: () => Promise<void> = () => Promise.resolve();
  const onMessage = (channel: string, message: string) => {
    // The channel of this prefix only (see resource.ts), decoded back to the name as given.
    const resource = resourceOfChannel(prefix, channel);
    if (resource !== null) onRelease(resource, message);
  };
  const connection = (): Redis | Cluster => {
    if (conn) return conn;
    conn = sharded
      ? (redis as Cluster).duplicate([], { shardedSubscribers: true })
      : // The subscriber must queue SUBSCRIBE until it connects, even when the caller's client
        // fails fast (enableOfflineQueue: false); otherwise waiters silently fall back to polling.
        // Nor may it inherit the caller's maxRetriesPerRequest: a SUBSCRIBE queued while it reconnects
        // would be flushed with an error after that many reconnects, and the resource would go unheard.
        (redis as Redis).duplicate({
          lazyConnect: false,
          enableOfflineQueue: true,
          maxRetriesPerRequest: null,
        });
    // Errors surface on the waiters as fallback polling; the connection reconnects by itself.
    conn.on("error", () => {});
    // ioredis re-subscribes on reconnect, but a release published while the connection was down is lost:
    // every waiting head must look again once the subscriber is back.
    let readyBefore = false;
    conn.on("ready", () => {
      if (readyBefore) onResubscribed();
      readyBefore = true;
    });
    conn.on(sharded ? "smessage" : "message", onMessage);
    if (!sharded) ready = whenReady(conn as Redis);
    return conn;
  };
  return {
    async subscribe(resource) {
      const c = connection();
      const ch = releaseChannel(resource, prefix);
      await ready();
      await (sharded ? c.ssubscribe(ch) : c.subscribe(ch));
    },
    unsubscribe(resource) {
      const c = conn;
      if (!c) return;
      const ch = releaseChannel(resource, prefix);
      // After any SUBSCRIBE still waiting for the connection (same promise, so in order).
      ready()
        .then(() => (sharded ? c.sunsubscribe(ch) : c.unsubscribe(ch)))
        .catch(() => {});
    },
    async close() {
      const c = conn;
      conn = undefined;
      if (!c) return;
      c.removeAllListeners("message");
      c.removeAllListeners("smessage");
      c.disconnect();
    },
  };
}
