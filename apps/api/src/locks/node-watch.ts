import type { Redis } from "ioredis";
import { globPrefix } from "./keys.js";

/** A key event: the key and the event's name (`hset`, `del`…). */
export type OnKey = (key: string, event: string) => void;

/**
 * One subscriber connection to one Redis node (each master of a Cluster publishes its own keyspace events),
 * PSUBSCRIBEd to the keyspace channels of the lock prefix. Reports every key event with its name (`hset`, `del`…),
 * and every reconnect (events were missed while it was down).
 */
export class NodeWatch {
  private readonly conn: Redis;
  private readonly channelPrefix: string;
  private readonly pattern: string;
  private connected = false;

  constructor(
    readonly node: Redis,
    prefix: string,
    name: string,
    onKey: OnKey,
    onReconnect: () => void,
  ) {
    const db = node.options.db ?? 0;
    this.channelPrefix = `__keyspace@${db}__:`;
    // Its own connection: a subscribed connection can run nothing else. The offline queue holds the PSUBSCRIBE
    // until the connection is up. It subscribes again after a reconnect itself: ioredis's own re-subscribe leaves
    // its promise unhandled, and a stop() before its answer would end the process ("Connection is closed.").
    // A PSUBSCRIBE unanswered when the connection drops is sent again (the API's clients re-send nothing, but
    // it may run twice): else start() would fail at commandTimeout, or hang without one, though subscribed.
    this.conn = node.duplicate({
      connectionName: name,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      autoResendUnfulfilledCommands: true,
      autoResubscribe: false,
      lazyConnect: true,
    });
    this.conn.on("error", () => {}); // reconnects by itself; the main connection logs Redis being down
    this.conn.on("pmessage", (_pattern: string, channel: string, event: string) => {
      onKey(channel.slice(this.channelPrefix.length), event);
    });
    this.conn.on("ready", () => {
      if (this.connected) {
        // Failed, the connection dropped again: it subscribes on its next ready.
        this.conn.psubscribe(this.pattern).catch(() => {});
        onReconnect();
      }
      this.connected = true;
    });
    this.pattern = `${this.channelPrefix}${globPrefix(prefix)}`;
  }

  /** Connects and subscribes; rejects when the node cannot be reached. */
  async start(): Promise<void> {
    await this.conn.connect();
    await this.conn.psubscribe(this.pattern);
  }

  get address(): string {
    return `${this.node.options.host}:${this.node.options.port}`;
  }

  stop(): void {
    this.conn.disconnect();
  }
}
