import type { Cluster, Redis } from "ioredis";
import type { ReleaseSubscriber } from "./backend.js";
import { releaseChannel } from "./resource.js";
import type { RedisClient } from "./scripts/index.js";

const CHANNEL_PREFIX = "lock-released:{";

/**
 * One shared subscriber connection per Locks: `redis.duplicate()`, made on first contention.
 * On a Cluster it uses SSUBSCRIBE (the release script SPUBLISHes to the lock's own slot).
 */
export function createRedisSubscriber(
  redis: RedisClient,
  sharded: boolean,
  onRelease: (resource: string) => void,
): ReleaseSubscriber {
  let conn: Redis | Cluster | undefined;
  const onMessage = (channel: string) => {
    if (channel.startsWith(CHANNEL_PREFIX)) onRelease(channel.slice(CHANNEL_PREFIX.length, -1));
  };
  const connection = (): Redis | Cluster => {
    if (conn) return conn;
    conn = sharded
      ? (redis as Cluster).duplicate([], { shardedSubscribers: true })
      : // The subscriber must queue SUBSCRIBE until it connects, even when the caller's client
        // fails fast (enableOfflineQueue: false); otherwise waiters silently fall back to polling.
        (redis as Redis).duplicate({ lazyConnect: false, enableOfflineQueue: true });
    // Errors surface on the waiters as fallback polling; the connection reconnects by itself.
    conn.on("error", () => {});
    conn.on(sharded ? "smessage" : "message", onMessage);
    return conn;
  };
  return {
    async subscribe(resource) {
      const c = connection();
      const ch = releaseChannel(resource);
      await (sharded ? c.ssubscribe(ch) : c.subscribe(ch));
    },
    unsubscribe(resource) {
      if (!conn) return;
      const ch = releaseChannel(resource);
      (sharded ? conn.sunsubscribe(ch) : conn.unsubscribe(ch)).catch(() => {});
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
