import type { Redis } from "ioredis";
import type { ReleaseSubscriber } from "../core/backend.js";
import type { Clock } from "../core/clock.js";
import { channelDeniedWarner } from "../redis/channel-rights.js";
import { resubscribeOnReconnect, SUBSCRIBER_OPTIONS, type SubscribedChannels } from "../redis/resubscribe.js";
import { whenReady } from "../redis/when-ready.js";
import { releaseChannel, resourceOfChannel } from "../resource.js";

// A subscription that no quorum of nodes confirms by then (nodes down: their SUBSCRIBE stays queued) is left
// to the waiters' fallback timers; one that too few nodes took, all having answered, failed.
const SUBSCRIBE_WAIT_MS = 1_000;

/**
 * Wake-on-release over independent nodes: one subscriber connection per node (made on first contention),
 * every resource subscribed on all of them. A holder's release publishes on each node it held, so a
 * subscription confirmed by a quorum of nodes overlaps the holder's quorum in at least one node.
 *
 * Every node's copy of a release wakes the head waiter, although they mostly arrive together. Woken by the
 * first copy, the head may try while the release has not yet reached the other nodes and be refused there;
 * only their copies tell it to try again (copies arriving while it tries make it retry at once, through the
 * gate's epoch). Waking once per release, as this did, left such a waiter asleep for its whole fallback
 * interval while the lock was free. The cost is one extra attempt for a new head per late copy.
 */
export function createRedlockSubscriber(
  clock: Clock,
  clients: readonly Redis[],
  quorum: number,
  prefix: string,
  onRelease: (resource: string) => void,
  onResubscribed: () => void = () => {},
): ReleaseSubscriber {
  let conns: { conn: Redis; ready: () => Promise<void>; subscribed: SubscribedChannels }[] | undefined;
  const warnDenied = channelDeniedWarner();
  const onMessage = (channel: string) => {
    const resource = resourceOfChannel(prefix, channel);
    if (resource !== null) onRelease(resource);
  };
  const connections = () => {
    conns ??= clients.map((c) => {
      // Queue SUBSCRIBE until connected even when the node's client fails fast, and keep it queued for as
      // long as the node is down (no retry limit): a SUBSCRIBE dropped while the node was down would leave its
      // waiters deaf to that node for good (SUBSCRIBER_OPTIONS).
      const s = c.duplicate(SUBSCRIBER_OPTIONS);
      s.on("error", () => {});
      s.on("message", onMessage);
      // A release published on this node while its subscriber was away was missed: waiting heads look again.
      const subscribed = resubscribeOnReconnect(s, onResubscribed);
      return { conn: s, ready: whenReady(s), subscribed };
    });
    return conns;
  };
  return {
    subscribe(resource) {
      const ch = releaseChannel(resource, prefix);
      const all = connections();
      return new Promise<void>((resolve, reject) => {
        let ok = 0;
        let settled = 0;
        let firstError: unknown;
        const done = () => {
          clock.clearTimer(timer);
          resolve();
        };
        const timer = clock.setTimer(done, SUBSCRIBE_WAIT_MS);
        for (const { conn, ready, subscribed } of all) {
          subscribed.add([ch]);
          ready()
            .then(() => conn.subscribe(ch))
            .then(
              () => {
                if (++ok >= quorum) done();
              },
              (err: unknown) => {
                firstError ??= err;
                warnDenied(ch, err);
              },
            )
            .then(() => {
              if (++settled < all.length || ok >= quorum) return;
              // Every node answered and too few took it: the waiters would hear too few releases, so the
              // subscription failed (its gate subscribes again), rather than counting as made.
              clock.clearTimer(timer);
              reject(new Error(`subscribed on ${ok} of ${all.length} nodes`, { cause: firstError }));
            });
        }
      });
    },
    unsubscribe(resource) {
      if (!conns) return;
      const ch = releaseChannel(resource, prefix);
      for (const { conn, ready, subscribed } of conns) {
        subscribed.delete([ch]);
        ready()
          .then(() => conn.unsubscribe(ch))
          .catch(() => {});
      }
    },
    async close() {
      const cs = conns;
      conns = undefined;
      for (const { conn } of cs ?? []) {
        conn.removeAllListeners("message");
        conn.disconnect();
      }
    },
  };
}
