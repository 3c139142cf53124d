import type { Redis } from "ioredis";

/**
 * For a subscriber connection: a function that resolves once the connection is ready (at once when it is),
 * and rejects when it ends first. Every caller waiting meanwhile shares one pair of listeners.
 *
 * A SUBSCRIBE must not be sent while the connection is still connecting: ioredis 5.8–5.11 writes it among its
 * handshake commands, the handshake's INFO then fails on the subscribed connection (ioredis #2037, fixed in
 * 6.0), and ioredis reconnects without that subscription, or rejects the SUBSCRIBE. Either way the waiters
 * behind it would sleep through a release. Sent once the connection is ready, it cannot meet the handshake,
 * and on a later reconnect resubscribeOnReconnect re-subscribes on "ready", after the handshake.
 */
export function whenReady(conn: Redis): () => Promise<void> {
  let next: Promise<void> | undefined;
  return () => {
    if (conn.status === "ready") return Promise.resolve();
    next ??= new Promise<void>((resolve, reject) => {
      const onReady = () => {
        conn.off("end", onEnd);
        next = undefined;
        resolve();
      };
      const onEnd = () => {
        conn.off("ready", onReady);
        next = undefined;
        reject(new Error("the subscriber connection ended before it was ready"));
      };
      conn.once("ready", onReady);
      conn.once("end", onEnd);
    });
    return next;
  };
}
