import type { Cluster, Redis } from "ioredis";
import type { ReleaseSubscriber } from "../core/backend.js";
import { handoffChannel, releaseChannel, resourceOfChannel } from "../resource.js";
import type { RedisClient } from "./scripts/index.js";
import { whenReady } from "./when-ready.js";

/**
 * One shared subscriber connection per Locks: `redis.duplicate()`, made on first contention.
 * On a Cluster it uses SSUBSCRIBE (the release script SPUBLISHes to the lock's own slot).
 * With `instanceId` (a mutex's), each resource's handoff channel for this process too, in the same command.
 */
export function createRedisSubscriber(
  redis: RedisClient,
  sharded: boolean,
  prefix: string,
  onRelease: (resource: string, message: string) => void,
  onResubscribed: () => void = () => {},
  instanceId?: string,
): ReleaseSubscriber {
  const suffix = instanceId === undefined ? undefined : handoffChannel("", instanceId);
  const channelsOf = (resource: string): string[] => {
    const ch = releaseChannel(resource, prefix);
    return instanceId === undefined ? [ch] : [ch, handoffChannel(ch, instanceId)];
  };
  let conn: Redis | Cluster | undefined;
  // A Cluster's sharded subscribers connect per shard on their own; only a plain connection waits (when-ready.ts).
  let ready: () => Promise<void> = () => Promise.resolve();
  const onMessage = (channel: string, message: string) => {
    // The channel of this prefix only (see resource.ts), decoded back to the name as given.
    const handoff = suffix !== undefined && channel.endsWith(suffix);
    const resource =
      (handoff ? resourceOfChannel(prefix, channel.slice(0, -suffix.length)) : null) ??
      resourceOfChannel(prefix, channel);
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
      const chs = channelsOf(resource);
      await ready();
      await (sharded ? c.ssubscribe(...chs) : c.subscribe(...chs));
    },
    unsubscribe(resource) {
      const c = conn;
      if (!c) return;
      const chs = channelsOf(resource);
      // After any SUBSCRIBE still waiting for the connection (same promise, so in order).
      ready()
        .then(() => (sharded ? c.sunsubscribe(...chs) : c.unsubscribe(...chs)))
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
