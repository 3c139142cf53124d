// Types of reply-cutter.mjs for the TypeScript tests that lose Redis replies.
export interface ReplyCutter {
  /** redis://127.0.0.1:<port> of the proxy. */
  url: string;
  /** The proxy's port (for a server whose URL is not redis://). */
  port: number;
  /** From now on commands still reach Redis (and run), but their replies are dropped. */
  holdReplies(): void;
  /** From now on nothing the clients send reaches the server. */
  dropRequests(): void;
  /**
   * The next connection to send `text` (bytes of one statement, e.g. `LISTEN lockyard`) is killed: before the
   * server reads it, or after the server ran it, in place of its answer. Resolves true when that happened,
   * false when a later `cutOnce` replaced this one first.
   */
  cutOnce(text: string, when: "before-server" | "after-server"): Promise<boolean>;
  /** Closes every proxied connection and lets requests and replies through again; clients reconnect through it. */
  cut(): void;
  close(): Promise<void>;
}
export function startReplyCutter(targetUrl: string): Promise<ReplyCutter>;
