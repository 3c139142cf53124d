import type { Notification, Pool, PoolClient } from "pg";
import type { ReleaseSubscriber } from "../core/backend.js";
import { PG_CHANNEL } from "./sql.js";

const RECONNECT_MS = 500;

/**
 * LISTEN on one dedicated client checked out of the pool, on first contention; given back on close.
 * There is one channel for every lock, so subscribing to a resource sends nothing: it only filters.
 * If the connection dies, waiters fall back to their timers until it is re-made, and then every subscribed
 * resource is woken, since releases in between went unheard.
 */
export function createPgListener(pool: Pool, onRelease: (resource: string) => void): ReleaseSubscriber {
  const resources = new Set<string>();
  let client: PoolClient | undefined;
  let connecting: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const onNotification = (msg: Notification) => {
    if (msg.channel === PG_CHANNEL && msg.payload !== undefined && resources.has(msg.payload)) {
      onRelease(msg.payload);
    }
  };

  const onError = (err: Error) => {
    if (client) drop(client, err);
  };
  const onEnd = () => {
    if (client) drop(client, new Error("LISTEN connection ended"));
  };
  const detach = (c: PoolClient) => {
    c.removeListener("notification", onNotification);
    c.removeListener("error", onError);
    c.removeListener("end", onEnd);
  };

  const drop = (c: PoolClient, err: Error) => {
    if (client !== c) return;
    client = undefined;
    detach(c);
    c.release(err);
    scheduleReconnect();
  };

  const scheduleReconnect = () => {
    if (closed || timer || resources.size === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      connect().then(
        () => {
          for (const r of resources) onRelease(r);
        },
        () => scheduleReconnect(),
      );
    }, RECONNECT_MS);
    timer.unref();
  };

  const connect = (): Promise<void> => {
    if (client) return Promise.resolve();
    connecting ??= (async () => {
      const c = await pool.connect();
      // A checked-out client's errors are ours to handle; unhandled, they would crash the process.
      c.on("error", onError);
      c.on("end", onEnd);
      c.on("notification", onNotification);
      client = c;
      try {
        await c.query(`LISTEN ${PG_CHANNEL}`);
      } catch (err) {
        drop(c, err instanceof Error ? err : new Error(String(err)));
        throw err;
      }
      if (closed) await giveBack();
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };

  const giveBack = async () => {
    const c = client;
    if (!c) return;
    client = undefined;
    detach(c);
    // pg emits 'error' even while a query is pending; unheard, it would crash the process.
    const swallow = () => {};
    c.on("error", swallow);
    try {
      await c.query(`UNLISTEN ${PG_CHANNEL}`);
      c.release();
    } catch (err) {
      c.release(err instanceof Error ? err : new Error(String(err)));
    } finally {
      c.removeListener("error", swallow);
    }
  };

  return {
    async subscribe(resource) {
      resources.add(resource);
      try {
        await connect();
      } catch (err) {
        scheduleReconnect();
        throw err;
      }
    },
    unsubscribe(resource) {
      resources.delete(resource);
    },
    async close() {
      closed = true;
      resources.clear();
      if (timer) clearTimeout(timer);
      timer = undefined;
      await connecting?.catch(() => {});
      await giveBack();
    },
  };
}
