import type { Cluster, Redis } from "ioredis";
import type { ReleaseSubscriber } from "../core/backend.js";
import { handoffChannel, releaseChannel, resourceOfChannel } from "../resource.js";
import { channelDeniedWarner } from "./channel-rights.js";
import { resubscribeOnReconnect, SUBSCRIBER_OPTIONS, type SubscribedChannels } from "./resubscribe.js";
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
  // A Cluster's sharded subscribers connect per shard on their own; only a plain connection waits (when-ready.ts)
  // and re-subscribes after a reconnect (resubscribe.ts); ioredis's sharded subscribers re-subscribe themselves.
  let ready: () => Promise<void> = () => Promise.resolve();
  let subscribed: SubscribedChannels | undefined;
  const warnDenied = channelDeniedWarner();
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
    if (sharded) {
      conn = (redis as Cluster).duplicate([], { shardedSubscribers: true });
      conn.on("smessage", onMessage);
      // A release published while a shard's subscriber was down was missed: every waiting head looks again.
      let readyBefore = false;
      conn.on("ready", () => {
        if (readyBefore) onResubscribed();
        readyBefore = true;
      });
    } else {
      const plain = (redis as Redis).duplicate(SUBSCRIBER_OPTIONS);
      plain.on("message", onMessage);
      subscribed = resubscribeOnReconnect(plain, onResubscribed);
      ready = whenReady(plain);
      conn = plain;
    }
    // Errors surface on the waiters as fallback polling; the connection reconnects by itself.
    conn.on("error", () => {});
    return conn;
  };
  return {
    async subscribe(resource) {
      const c = connection();
      const chs = channelsOf(resource);
      subscribed?.add(chs);
      await ready();
      try {
        await (sharded ? c.ssubscribe(...chs) : c.subscribe(...chs));
      } catch (err) {
        warnDenied(chs[0]!, err);
        throw err;
      }
    },
    unsubscribe(resource) {
      const c = conn;
      if (!c) return;
      const chs = channelsOf(resource);
      subscribed?.delete(chs);
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
