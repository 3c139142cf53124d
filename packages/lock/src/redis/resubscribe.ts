import type { Redis } from "ioredis";

/**
 * Options of a subscriber connection made with `duplicate()`. It queues SUBSCRIBE until it connects, even when
 * the caller's client fails fast (enableOfflineQueue: false); otherwise waiters silently fall back to polling.
 * Nor may it inherit the caller's maxRetriesPerRequest: a SUBSCRIBE queued while it reconnects would be flushed
 * with an error after that many reconnects, and the resource would go unheard. Nor its
 * autoResendUnfulfilledCommands: off, a SUBSCRIBE whose connection dropped before the answer would never settle
 * (without a commandTimeout), and the resource's waiters would wait on it for good; every command this
 * connection sends is a (P/S)(UN)SUBSCRIBE, which may run twice. It re-subscribes by `resubscribeOnReconnect`,
 * not by ioredis (autoResubscribe: false).
 */
export const SUBSCRIBER_OPTIONS = {
  lazyConnect: false,
  enableOfflineQueue: true,
  maxRetriesPerRequest: null,
  autoResendUnfulfilledCommands: true,
  autoResubscribe: false,
} as const;

/** The channels a subscriber connection is on: what it subscribes again after a reconnect. */
export interface SubscribedChannels {
  add(channels: readonly string[]): void;
  delete(channels: readonly string[]): void;
}

/**
 * Subscribes `conn` (made with SUBSCRIBER_OPTIONS) to its channels again after every reconnect, then calls
 * `onResubscribed`: a release published while the connection was down was missed, so waiters look again.
 *
 * ioredis can re-subscribe by itself (autoResubscribe), but leaves that SUBSCRIBE's promise unhandled
 * (ioredis 5 and 6): a connection closed before its answer, as a Locks closed while its subscriber
 * reconnects, rejects it with "Connection is closed.", which ends a Node process by default.
 */
export function resubscribeOnReconnect(conn: Redis, onResubscribed: () => void): SubscribedChannels {
  const channels = new Set<string>();
  let readyBefore = false;
  conn.on("ready", () => {
    if (!readyBefore) {
      readyBefore = true;
      return;
    }
    // A failure here means the connection dropped again: it re-subscribes on its next ready.
    if (channels.size > 0) conn.subscribe(...channels).catch(() => {});
    onResubscribed();
  });
  return {
    add(chs) {
      for (const ch of chs) channels.add(ch);
    },
    delete(chs) {
      for (const ch of chs) channels.delete(ch);
    },
  };
}
